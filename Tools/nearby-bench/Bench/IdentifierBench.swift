import ArgumentParser
import CommandLineSupport
import Core
import Foundation

/// Core's `Identifier` (a `UInt128` written as a lowercase UUID) against `Foundation.UUID`,
/// on the work the server does with ids on every request and row: parse the text, write the
/// text, make a random one, insert and look up in a dictionary. Ratios within one run only
/// (the machine is shared): the decision in docs/design.md ("Modules") rests on them.
struct IdentifierBench: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "identifiers",
    abstract: "Identifier vs Foundation.UUID: parse, text, random, dictionary (ratios).",
    discussion: """
      Exits 1 when an Identifier's text does not parse back to it, or a lookup misses (the \
      figures would be of the wrong work), never for the ratios.
      """)

  @Option(help: "Ids per round.") var count = 200_000
  @Option(help: "Rounds; the best round of each operation counts.") var rounds = 5
  @Flag(
    help: """
      A short run for the test command, so the benchmark cannot rot: 20 000 ids, one round \
      (replaces --count and --rounds).
      """)
  var short = false
  @Flag(help: "Print the results as one JSON object.") var json = false

  struct Operation: Encodable {
    var name: String
    var identifierNanoseconds: Double
    var uuidNanoseconds: Double
    /// UUID's time over Identifier's: above 1, Identifier is faster.
    var ratio: Double
  }

  struct Results: Encodable {
    var count: Int
    var operations: [Operation]
    /// Texts `UUID(uuidString:)` accepts that `Identifier` refuses.
    var uuidAcceptsMalformed: [String]
  }

  func validate() throws {
    guard count > 0, rounds > 0 else { throw ValidationError("--count and --rounds must be > 0") }
  }

  func run() throws {
    let count = short ? 20_000 : self.count
    let rounds = short ? 1 : self.rounds
    let identifiers = (0..<count).map { _ in Identifier.random() }
    let texts = identifiers.map(\.description)
    guard zip(identifiers, texts).allSatisfy({ Identifier($1) == $0 }) else {
      throw CommandFailure("an Identifier's text does not parse back to the same Identifier")
    }
    var lookup: [Identifier: Int] = [:]
    for (index, id) in identifiers.enumerated() { lookup[id] = index }
    guard identifiers.enumerated().allSatisfy({ lookup[$1] == $0 }) else {
      throw CommandFailure("a dictionary of Identifiers missed one of its keys")
    }
    let uuids = texts.compactMap { UUID(uuidString: $0) }
    guard uuids.count == texts.count else {
      throw CommandFailure("UUID(uuidString:) refused an Identifier's text")
    }
    var sink = 0

    /// The best time of `rounds` runs of `body` over `count` items, in nanoseconds per item.
    func best(_ body: () -> Int) -> Double {
      var fastest = Duration.seconds(1_000_000)
      for _ in 0..<rounds {
        let start = ContinuousClock.now
        sink &+= body()
        fastest = min(fastest, start.duration(to: .now))
      }
      return fastest.seconds * 1e9 / Double(count)
    }

    var operations: [Operation] = []
    func compare(_ name: String, identifier: () -> Int, uuid: () -> Int) {
      let mine = best(identifier)
      let theirs = best(uuid)
      operations.append(
        Operation(
          name: name, identifierNanoseconds: mine, uuidNanoseconds: theirs, ratio: theirs / mine))
    }
    compare(
      "parse", identifier: { texts.reduce(0) { $0 &+ (Identifier($1) == nil ? 0 : 1) } },
      uuid: { texts.reduce(0) { $0 &+ (UUID(uuidString: $1) == nil ? 0 : 1) } })
    compare(
      "text", identifier: { identifiers.reduce(0) { $0 &+ $1.description.utf8.count } },
      uuid: { uuids.reduce(0) { $0 &+ $1.uuidString.lowercased().utf8.count } })
    compare(
      "random",
      identifier: {
        (0..<count).reduce(0) { sum, _ in
          sum &+ Int(truncatingIfNeeded: Identifier.random().bits & 1)
        }
      },
      uuid: { (0..<count).reduce(0) { sum, _ in sum &+ Int(UUID().uuid.0 & 1) } })
    compare(
      "dictionary",
      identifier: {
        var table: [Identifier: Int] = [:]
        for (index, id) in identifiers.enumerated() { table[id] = index }
        return identifiers.reduce(0) { $0 &+ (table[$1] ?? 0) }
      },
      uuid: {
        var table: [UUID: Int] = [:]
        for (index, id) in uuids.enumerated() { table[id] = index }
        return uuids.reduce(0) { $0 &+ (table[$1] ?? 0) }
      })
    let malformed = [
      " " + String(texts[0].dropLast()),  // 35 characters after a space
      texts[0].uppercased(),
      String(texts[0].dropLast()) + "\u{0}",
    ].filter { UUID(uuidString: $0) != nil && Identifier($0) == nil }

    let results = Results(count: count, operations: operations, uuidAcceptsMalformed: malformed)
    if json {
      print(JSONLine.encode(results))
    } else {
      print("\(count) ids, best of \(rounds) rounds, ns per id (ratio = UUID / Identifier):")
      for operation in operations {
        print(
          "  \(operation.name.padding(toLength: 10, withPad: " ", startingAt: 0))"
            + " Identifier \(String(format: "%7.1f", operation.identifierNanoseconds))"
            + "  UUID \(String(format: "%7.1f", operation.uuidNanoseconds))"
            + "  ratio \(String(format: "%.2f", operation.ratio))")
      }
      print("texts UUID(uuidString:) accepts and Identifier refuses: \(malformed)")
    }
    if sink == 42 { print("") }  // keeps the work from being optimized away
  }
}
