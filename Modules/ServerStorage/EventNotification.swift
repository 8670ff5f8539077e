public import Core

/// What a database says about new events, so the server wakes exactly the event streams that
/// have something to read, whichever instance wrote the events.
public enum EventNotification: Sendable, Hashable {
  /// These devices have new events in the log.
  case devices([DeviceID])
  /// Notifications may have been missed (the listening connection was (re)established, or
  /// the buffer overflowed): every stream should look once.
  case resynchronize
}
