import CDBus

/// Conversion between ``DBusMessage`` values and libdbus messages. Everything is checked in
/// Swift before libdbus sees it: libdbus aborts the process on some invalid arguments.
extension DBusMessage {
  /// Encodes the message to its D-Bus wire form (as sent on a connection, little-endian).
  /// - Throws: ``DBusError`` (``DBusError/Name-swift.struct/invalidArgs``) for an invalid
  ///   header field or value.
  public func serialized() throws(DBusError) -> [UInt8] {
    let message = try makeLibdbusMessage()
    defer { dbus_message_unref(message) }
    if serial != 0 {
      dbus_message_set_serial(message, serial)
    } else {
      dbus_message_set_serial(message, 1)
    }
    var buffer: UnsafeMutablePointer<CChar>?
    var length: Int32 = 0
    guard dbus_message_marshal(message, &buffer, &length) != 0, let buffer else {
      throw DBusError(.noMemory, "out of memory while serializing a message")
    }
    defer { dbus_free(buffer) }
    return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
      Array(UnsafeBufferPointer(start: $0, count: Int(length)))
    }
  }

  /// Decodes a message from its D-Bus wire form.
  /// - Throws: ``DBusError`` when the bytes are not one complete, valid message (libdbus's
  ///   validation: lengths, alignment, header fields, signature, UTF-8, nesting), or when the
  ///   message uses a type this library does not support (unix file descriptors).
  public init(serialized bytes: some Collection<UInt8>) throws(DBusError) {
    let array = Array(bytes)
    let needed = array.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        dbus_message_demarshal_bytes_needed($0.baseAddress, Int32(clamping: $0.count))
      }
    }
    guard needed == array.count else {
      throw DBusError(
        .invalidArgs,
        needed <= 0
          ? "the bytes do not start a D-Bus message"
          : "the bytes hold \(array.count) bytes, the message they start is \(needed) bytes")
    }
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    let message: OpaquePointer? = array.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        dbus_message_demarshal($0.baseAddress, Int32(clamping: $0.count), &error)
      }
    }
    guard let message else {
      let failure = DBusError(taking: &error, or: "the bytes are not a D-Bus message")
      throw failure
    }
    defer { dbus_message_unref(message) }
    try self.init(libdbus: message)
  }

  /// Reads a libdbus message (which libdbus has validated).
  init(libdbus message: OpaquePointer) throws(DBusError) {
    let kind: Kind
    switch dbus_message_get_type(message) {
    case cdbus_message_type_method_call: kind = .methodCall
    case cdbus_message_type_method_return: kind = .methodReturn
    case cdbus_message_type_error: kind = .error
    case cdbus_message_type_signal: kind = .signal
    case let other: throw DBusError(.invalidArgs, "unknown message type \(other)")
    }
    self.init(kind: kind)
    serial = dbus_message_get_serial(message)
    let reply = dbus_message_get_reply_serial(message)
    replySerial = reply == 0 ? nil : reply
    if let text = dbus_message_get_path(message) {
      path = DBusObjectPath(unchecked: String(cString: text))
    }
    interface = dbus_message_get_interface(message).map { String(cString: $0) }
    member = dbus_message_get_member(message).map { String(cString: $0) }
    errorName = dbus_message_get_error_name(message).map { String(cString: $0) }
    destination = dbus_message_get_destination(message).map { String(cString: $0) }
    sender = dbus_message_get_sender(message).map { String(cString: $0) }
    noReplyExpected = dbus_message_get_no_reply(message) != 0
    var iter = DBusMessageIter()
    if dbus_message_iter_init(message, &iter) != 0 {
      let signature = dbus_message_get_signature(message).map { String(cString: $0) } ?? ""
      body = try DBusValueDecoder.decodeAll(&iter, types: DBusValueDecoder.bodyTypes(signature))
      knownSignature = signature
    }
  }

  /// Makes a libdbus message holding this message; the caller owns the reference.
  func makeLibdbusMessage() throws(DBusError) -> OpaquePointer {
    try checkHeader()
    var bodyTypes: [DBusType] = []
    bodyTypes.reserveCapacity(body.count)
    for value in body {
      try DBusValueEncoder.check(value, depth: 0)
      bodyTypes.append(value.type)
    }
    let signature = DBusType.signature(of: bodyTypes)
    guard signature.utf8.count <= DBusType.maximumSignatureLength else {
      throw DBusError.invalidValue("the body's signature is longer than 255 bytes")
    }
    let type: Int32 =
      switch kind {
      case .methodCall: cdbus_message_type_method_call
      case .methodReturn: cdbus_message_type_method_return
      case .error: cdbus_message_type_error
      case .signal: cdbus_message_type_signal
      }
    guard let message = dbus_message_new(type) else {
      throw DBusError(.noMemory, "out of memory while making a message")
    }
    var ok = true
    if let path { ok = ok && dbus_message_set_path(message, path.rawValue) != 0 }
    if let interface { ok = ok && dbus_message_set_interface(message, interface) != 0 }
    if let member { ok = ok && dbus_message_set_member(message, member) != 0 }
    if let errorName { ok = ok && dbus_message_set_error_name(message, errorName) != 0 }
    if let destination { ok = ok && dbus_message_set_destination(message, destination) != 0 }
    if let replySerial { ok = ok && dbus_message_set_reply_serial(message, replySerial) != 0 }
    if noReplyExpected { dbus_message_set_no_reply(message, 1) }
    if ok {
      var iter = DBusMessageIter()
      dbus_message_iter_init_append(message, &iter)
      for value in body where ok {
        ok = DBusValueEncoder.append(value, to: &iter)
      }
    }
    guard ok else {
      dbus_message_unref(message)
      throw DBusError(.noMemory, "out of memory while making a message")
    }
    return message
  }

  /// Checks the header fields D-Bus requires for the message's kind.
  private func checkHeader() throws(DBusError) {
    func require(_ condition: Bool, _ why: @autoclosure () -> String) throws(DBusError) {
      if !condition { throw DBusError.invalidValue(why()) }
    }
    if let interface {
      try require(DBusNames.isInterface(interface), "\"\(interface)\" is not an interface name")
    }
    if let member { try require(DBusNames.isMember(member), "\"\(member)\" is not a member name") }
    if let errorName {
      try require(DBusNames.isInterface(errorName), "\"\(errorName)\" is not an error name")
    }
    if let destination {
      try require(DBusNames.isBusName(destination), "\"\(destination)\" is not a bus name")
    }
    switch kind {
    case .methodCall:
      try require(path != nil && member != nil, "a method call needs a path and a member")
    case .signal:
      try require(
        path != nil && interface != nil && member != nil,
        "a signal needs a path, an interface and a member")
    case .methodReturn:
      try require(replySerial != nil, "a method return needs the serial it answers")
    case .error:
      try require(
        replySerial != nil && errorName != nil, "an error needs the serial it answers and a name")
    }
  }
}

extension DBusError {
  /// Takes the name and message out of a set libdbus error and frees it.
  init(taking error: inout CDBus.DBusError, or fallback: String) {
    if dbus_error_is_set(&error) != 0 {
      let name = error.name.map { String(cString: $0) } ?? Name.failed.rawValue
      let message = error.message.map { String(cString: $0) } ?? fallback
      self.init(Name(name), message)
    } else {
      self.init(.failed, fallback)
    }
    dbus_error_free(&error)
  }
}

extension DBusMessage {
  /// For benchmarks: parses `bytes` once with libdbus, then decodes that parsed message into
  /// a ``DBusMessage`` `times` times, calling `body` with each (the work a connection does for
  /// each message after libdbus has read it from the socket).
  @_spi(Benchmarks)
  public static func decodeRepeatedly(
    serialized bytes: [UInt8], times: Int, _ body: (DBusMessage) throws -> Void
  ) throws {
    var error = CDBus.DBusError()
    dbus_error_init(&error)
    let message: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        dbus_message_demarshal($0.baseAddress, Int32(clamping: $0.count), &error)
      }
    }
    guard let message else { throw DBusError(taking: &error, or: "not a D-Bus message") }
    defer { dbus_message_unref(message) }
    for _ in 0..<times { try body(try DBusMessage(libdbus: message)) }
  }
}
