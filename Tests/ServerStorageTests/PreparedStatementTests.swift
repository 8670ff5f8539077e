import Foundation
@testable import ServerStorage
import ServerTestSupport
import Testing
import TestSupport

/// PostgreSQL statements with binds run prepared once per connection, and only where the
/// binds have the parameter types PostgreSQL inferred.
@Suite("Prepared statements")
struct PreparedStatementTests {
  @Test func bindsFitOnlyTheInferredTypesAndNullFitsAny() {
    let types = ["bigint", "double precision", "text", "bytea"]
    #expect(
      PreparedStatementCache.fits([.integer(1), .real(2), .text("3"), .blob([4])], types))
    #expect(PreparedStatementCache.fits([.null, .null, .null, .null], types))
    // An integer where PostgreSQL expects a double would be read as the wrong bits.
    #expect(
      !PreparedStatementCache.fits([.integer(1), .integer(2), .text("3"), .blob([4])], types))
    #expect(!PreparedStatementCache.fits([.integer(1)], types))
  }

  @Test(.requires(.postgres)) func everyKindOfValueRoundTripsThroughAPreparedStatement()
    async throws
  {
    let storage = try await StorageFixture.make(.postgres)
    try await withShutdown(storage) { storage in
      let (rows, preparedCount) = try await storage.transaction { store in
        try store.sql.execute(
          "CREATE TABLE kinds (k BIGINT PRIMARY KEY, r DOUBLE PRECISION, t TEXT, b BYTEA)")
        let insert = "INSERT INTO kinds (k, r, t, b) VALUES (?, ?, ?, ?)"
        try store.sql.execute(
          insert, [.integer(-7), .real(2.5), .text("é ✓"), .blob([0, 255, 1])])
        try store.sql.execute(insert, [.integer(Int64.max), .null, .null, .blob([])])
        let select = "SELECT k, r, t, b FROM kinds WHERE k = ?"
        let rows = [
          try store.sql.query(select, [.integer(-7)]),
          try store.sql.query(select, [.integer(Int64.max)]),
        ]
        let prepared = try store.sql.queryFirst(
          "SELECT COUNT(*) FROM pg_prepared_statements WHERE statement IN (?, ?)",
          [
            .text("INSERT INTO kinds (k, r, t, b) VALUES ($1, $2, $3, $4)"),
            .text("SELECT k, r, t, b FROM kinds WHERE k = $1"),
          ])?.integer(0)
        return (rows, prepared)
      }
      #expect(rows[0] == [SQLRow([.integer(-7), .real(2.5), .text("é ✓"), .blob([0, 255, 1])])])
      #expect(rows[1] == [SQLRow([.integer(Int64.max), .null, .null, .blob([])])])
      #expect(preparedCount == 2)  // each prepared once, though each ran twice
    }
  }

  /// A parameter PostgreSQL types otherwise than the store binds (here `integer`) runs
  /// unnamed, with the bind's own type, and gives the right answer every time.
  @Test(.requires(.postgres)) func aStatementOfOtherParameterTypesRunsUnnamed() async throws {
    let storage = try await StorageFixture.make(.postgres)
    try await withShutdown(storage) { storage in
      let answers = try await storage.transaction { store in
        try (0..<3).map { _ in
          try store.sql.queryFirst("SELECT CAST(? AS integer) + 1", [.integer(41)])?.integer(0)
        }
      }
      #expect(answers == [42, 42, 42])
    }
  }

  /// `?prepared=off`, for a pooler that does not keep prepared statements: nothing is
  /// prepared, everything still runs; another value is refused with the fix.
  @Test(.requires(.postgres)) func theURLCanTurnPreparingOff() async throws {
    let url = try await TestPostgres.freshDatabase()
    let storage = try await PostgresStorage(url: url + "?prepared=off")
    try await withShutdown(storage) { storage in
      let (answer, prepared) = try await storage.transaction { store in
        (
          try store.sql.queryFirst("SELECT ? || 'b'", [.text("a")])?.text(0),
          try store.sql.queryFirst("SELECT COUNT(*) FROM pg_prepared_statements", [])?.integer(0)
        )
      }
      #expect(answer == "ab")
      #expect(prepared == 0)
      await #expect(throws: SQLStorageError.self) {
        _ = try await PostgresStorage(url: url + "?prepared=maybe")
      }
    }
  }
}
