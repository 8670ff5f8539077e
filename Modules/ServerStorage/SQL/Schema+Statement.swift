import Foundation

extension Schema {
  /// DDL text with the dialect's type names left open, for every dialect or one.
  struct Statement: ExpressibleByStringLiteral {
    let template: String
    /// The one dialect it is for; nil: all.
    let only: SQLDialect?

    init(stringLiteral value: String) {
      template = value
      only = nil
    }

    private init(_ template: String, only: SQLDialect) {
      self.template = template
      self.only = only
    }

    /// A statement that runs on PostgreSQL only (SQLite has no stored functions).
    static func postgres(_ text: String) -> Statement { Statement(text, only: .postgres) }

    /// The text for `dialect`, or nil when the statement is not for it.
    func `for`(_ dialect: SQLDialect) -> String? {
      if let only, only != dialect { return nil }
      let names: [String: String] =
        switch dialect {
        case .sqlite:
          [
            "{blob}": "BLOB", "{real}": "REAL", "{int}": "INTEGER",
            "{serial}": "INTEGER PRIMARY KEY AUTOINCREMENT",
            // SQLite checks foreign keys only when asked to; its one writer needs none.
            "{references messages}": "",
          ]
        case .postgres:
          [
            "{blob}": "BYTEA", "{real}": "DOUBLE PRECISION", "{int}": "BIGINT",
            "{serial}": "BIGSERIAL PRIMARY KEY",
            "{references messages}": " REFERENCES messages (digest)",
          ]
        }
      return names.reduce(template) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
    }
  }
}
