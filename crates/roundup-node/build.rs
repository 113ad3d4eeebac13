//! Links the addon as Node-API expects on each platform.

fn main() {
    napi_build::setup();
}
