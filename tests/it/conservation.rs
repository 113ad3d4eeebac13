//! Adapter-level conservation: on generated native streams of each
//! protocol (ordinary and odd events alike: numeric ids, rich content,
//! batches, missing session ids, unknown types), every text, argument and
//! result that the protocol's semantics keep is in the output, as a round,
//! a stitch, metadata or an anomaly. The generators and the check are
//! `roundup_testkit::native`, which the adapter fuzz targets run too.

use proptest::prelude::*;
use roundup_testkit::capture::{options, replay_lines};
use roundup_testkit::native::{check_conservation, native_stream};

fn conserved(format: &str, script: &[u8]) -> Result<(), TestCaseError> {
    let stream = native_stream(format, script);
    let (lines, _) = replay_lines(&stream.input(), &options(format, "records"));
    check_conservation(&stream, &lines).map_err(TestCaseError::fail)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn acp_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("acp", &script)?;
    }

    #[test]
    fn uagent_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("uagent", &script)?;
    }

    #[test]
    fn deepwork_loses_nothing(script in prop::collection::vec(any::<u8>(), 0..240)) {
        conserved("deepwork", &script)?;
    }
}

/// The property can fail: a stream whose marker is absent from the output
/// is caught (the check is not vacuous).
#[test]
fn a_lost_marker_is_caught() {
    let stream = native_stream("acp", &[0, 0, 0, 1, 0, 0]);
    assert_eq!(stream.markers.len(), 2);
    let (lines, _) = replay_lines(&stream.input(), &options("acp", "records"));
    assert!(check_conservation(&stream, &lines).is_ok());
    let without_thought: Vec<serde_json::Value> = lines.into_iter().filter(|l| l["type"] != "round").collect();
    assert!(check_conservation(&stream, &without_thought).unwrap_err().contains("zq0k was lost"));
}
