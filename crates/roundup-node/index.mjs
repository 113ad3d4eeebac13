// The ES module entry point: the same classes as the CommonJS one.
import roundup from "./index.cjs";

export const {
  Adapter,
  RoundBuilder,
  Router,
  Replayer,
  RoundupError,
  replay,
  replaySync,
  replayStream,
  inputFormats,
  outputFormats,
  version,
} = roundup;
export default roundup;
