public import Logging

/// A swift-log handler that writes to the systemd journal with `sd_journal_sendv(3)`, one
/// entry per message with fields:
///
/// - `MESSAGE`, `PRIORITY` (syslog 0–7 from the level), `SYSLOG_IDENTIFIER`, `LOGGER_LABEL`,
///   `LOGGER_LEVEL`, `CODE_FILE`, `CODE_LINE`, `CODE_FUNC`, `SOURCE_MODULE`;
/// - every metadata entry (the handler's, the logger's and the call's) as a field named by its
///   key in upper case, with characters other than `A-Z 0-9 _` turned into `_` and a leading
///   `_` or digit prefixed with `F` (the journal reserves `_` for trusted fields):
///   `nearby.device` becomes `NEARBY_DEVICE`.
///
/// Entries are handed to a dedicated writer thread (``JournalWriter``), so a slow journal
/// never blocks the logging caller.
public struct JournalLogHandler: LogHandler {
  public var metadata: Logger.Metadata = [:]
  public var logLevel: Logger.Level = .info
  public var metadataProvider: Logger.MetadataProvider?
  private let label: String
  private let identifier: String
  private let writer: JournalWriter

  /// A handler for `label`, writing entries with `SYSLOG_IDENTIFIER=identifier` through
  /// `writer` (default: the process's shared writer).
  public init(
    label: String, identifier: String, writer: JournalWriter = .shared,
    metadataProvider: Logger.MetadataProvider? = nil
  ) {
    self.label = label
    self.identifier = identifier
    self.writer = writer
    self.metadataProvider = metadataProvider
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    var fields: [(String, String)] = [
      ("MESSAGE", "\(event.message)"),
      ("PRIORITY", "\(Self.priority(event.level))"),
      ("SYSLOG_IDENTIFIER", identifier),
      ("LOGGER_LABEL", label),
      ("LOGGER_LEVEL", event.level.rawValue),
      ("CODE_FILE", event.file),
      ("CODE_LINE", "\(event.line)"),
      ("CODE_FUNC", event.function),
      ("SOURCE_MODULE", event.source),
    ]
    var merged = metadata
    if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
    if let call = event.metadata { merged.merge(call) { $1 } }
    for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
      fields.append((Self.fieldName(key), "\(value)"))
    }
    writer.send(fields)
  }

  /// The journal field name for a metadata key.
  public static func fieldName(_ key: String) -> String {
    var name = String(
      key.uppercased().unicodeScalars.map { scalar -> Character in
        switch scalar {
        case "A"..."Z", "0"..."9", "_": Character(scalar)
        default: "_"
        }
      })
    if name.isEmpty || name.first == "_" || name.first!.isNumber { name = "F" + name }
    return String(name.prefix(64))
  }

  /// syslog priorities: `trace`/`debug` 7, `info` 6, `notice` 5, `warning` 4, `error` 3,
  /// `critical` 2.
  public static func priority(_ level: Logger.Level) -> Int {
    switch level {
    case .trace, .debug: 7
    case .info: 6
    case .notice: 5
    case .warning: 4
    case .error: 3
    case .critical: 2
    }
  }
}
