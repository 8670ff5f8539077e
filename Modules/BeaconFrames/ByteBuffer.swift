/// Big-endian reads and writes shared by the frame parsers. Callers check bounds first.
extension UnsafeBufferPointer<UInt8> {
  func uint16(at offset: Int) -> UInt16 {
    UInt16(self[offset]) << 8 | UInt16(self[offset + 1])
  }

  func uint32(at offset: Int) -> UInt32 {
    UInt32(self[offset]) << 24 | UInt32(self[offset + 1]) << 16 | UInt32(self[offset + 2]) << 8
      | UInt32(self[offset + 3])
  }

  func int8(at offset: Int) -> Int8 { Int8(bitPattern: self[offset]) }
}

extension Array<UInt8> {
  mutating func appendBigEndian(_ value: UInt16) {
    append(UInt8(truncatingIfNeeded: value >> 8))
    append(UInt8(truncatingIfNeeded: value))
  }

  mutating func appendBigEndian(_ value: UInt32) {
    appendBigEndian(UInt16(truncatingIfNeeded: value >> 16))
    appendBigEndian(UInt16(truncatingIfNeeded: value))
  }
}

/// Runs `body` on the bytes of `collection` without copying them when they are contiguous.
/// `body` returns a `Result` so that its typed error survives the untyped
/// `withContiguousStorageIfAvailable`.
@inlinable
func withBuffer<Value>(
  _ collection: some Collection<UInt8>,
  _ body: (UnsafeBufferPointer<UInt8>) -> Result<Value, BeaconFrameError>
) throws(BeaconFrameError) -> Value {
  let result =
    collection.withContiguousStorageIfAvailable(body)
    ?? Array(collection).withUnsafeBufferPointer(body)
  return try result.get()
}

/// Runs a throwing parser and captures its typed error.
@inlinable
func capture<Value>(
  _ body: () throws(BeaconFrameError) -> Value
) -> Result<Value, BeaconFrameError> {
  do throws(BeaconFrameError) {
    return .success(try body())
  } catch {
    return .failure(error)
  }
}
