/// The lengths an Eddystone frame kind may have, and so the error for any other length.
enum EddystoneFrameLength {
  /// Exactly `length` bytes, or `legacy` bytes when given; any other count is
  /// ``BeaconFrameError/wrongLength(_:count:expected:)`` naming `kind` and `length`.
  case fixed(BeaconKind, Int, legacy: Int? = nil)
  /// A count in `range` (Eddystone-URL); any other is
  /// ``BeaconFrameError/urlFrameLength(count:)``.
  case within(ClosedRange<Int>)
}

extension UnsafeBufferPointer<UInt8> {
  /// The one check every Eddystone frame reader makes before reading its fields, in the
  /// order its errors are reported: the frame's length, its frame type byte, then for
  /// telemetry its version byte. Every accepted length is at least 3, so the reader may then
  /// read bytes 0 and 1.
  /// - Throws: the length's error (see ``EddystoneFrameLength``),
  ///   ``BeaconFrameError/unknownEddystoneFrameType(_:)`` for another frame type and
  ///   ``BeaconFrameError/unknownTLMVersion(_:)`` for another `version`.
  func checkEddystoneHeader(
    _ length: EddystoneFrameLength, frameType: UInt8, version: UInt8? = nil
  ) throws(BeaconFrameError) {
    switch length {
    case .fixed(let kind, let expected, let legacy):
      guard count == expected || count == legacy else {
        throw .wrongLength(kind, count: count, expected: expected)
      }
    case .within(let range):
      guard range.contains(count) else { throw .urlFrameLength(count: count) }
    }
    guard self[0] == frameType else { throw .unknownEddystoneFrameType(self[0]) }
    if let version, self[1] != version { throw .unknownTLMVersion(self[1]) }
  }
}
