import Testing

@testable import ServerStorage

/// Statements that carry a varying number of values come in few shapes, so a client cannot
/// fill a connection's statement cache by sending reports of every possible size.
@Suite("Statement shapes")
struct StatementShapesTests {
  @Test func inListsArePaddedToPowersOfTwo() {
    let three = StatementShapes.inList([.integer(1), .integer(2), .integer(3)])
    #expect(three.marks == "?, ?, ?, ?")
    #expect(three.binds == [.integer(1), .integer(2), .integer(3), .integer(3)])
    #expect(StatementShapes.inList([.integer(7)]).marks == "?")
    #expect(StatementShapes.inList([]).binds.isEmpty)
    let shapes = Set(
      (1...4096).map { count in
        StatementShapes.inList(Array(repeating: SQLValue.integer(0), count: count)).marks
      })
    #expect(shapes.count == 13)  // 1, 2, 4, …, 4096
  }

  @Test func rowsGoInPowerOfTwoChunks() {
    #expect(StatementShapes.chunks(13) == [8, 4, 1])
    #expect(StatementShapes.chunks(0) == [])
    #expect(StatementShapes.chunks(300) == [128, 128, 32, 8, 4])
    for count in 0...1000 {
      let sizes = StatementShapes.chunks(count)
      #expect(sizes.reduce(0, +) == count)
      #expect(sizes.allSatisfy { $0 > 0 && $0 <= 128 && $0 & ($0 - 1) == 0 })
    }
  }
}
