import Testing
import BeaconFrames
import Tokens

/// Bytes from hex digits; spaces are ignored. Traps on bad text (test literals only).
func hexBytes(_ text: String) -> [UInt8] {
  guard let bytes = Hex.decode(text.filter { !$0.isWhitespace }) else {
    preconditionFailure("bad hex literal \(text)")
  }
  return bytes
}

/// What parsing gave: a value or the typed error.
func outcome<Value>(_ body: () throws(BeaconFrameError) -> Value) -> Result<
  Value, BeaconFrameError
> {
  do throws(BeaconFrameError) {
    return .success(try body())
  } catch {
    return .failure(error)
  }
}

/// The typed error `body` throws, or `nil` when it does not throw.
func parseError<Value>(_ body: () throws(BeaconFrameError) -> Value) -> BeaconFrameError? {
  if case .failure(let error) = outcome(body) { return error }
  return nil
}

/// Flags (LE General Discoverable, no BR/EDR) and the Eddystone UUID list, as beacons send
/// them before the service data.
let eddystoneHeader = hexBytes("020106 0303aafe")
