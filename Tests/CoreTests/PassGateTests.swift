import Testing

@testable import Core

@Suite("PassGate")
struct PassGateTests {
  @Test("one pass at a time; a request during it is kept once and taken once")
  func oneAtATimeAndRequestsKept() {
    var gate = PassGate()
    let answers = [
      gate.begin(), gate.takeRequest(),
      // Two requests while it runs: the pass looks once more, not twice.
      gate.begin(), gate.begin(), gate.takeRequest(), gate.takeRequest(),
    ]
    #expect(answers == [true, false, false, false, true, false])
    gate.end()
    // Ended: the next request starts a pass of its own.
    let next = gate.begin()
    #expect(next)
    gate.end()
  }

  @Test("a request left when the pass ends does not leak into the next one")
  func endClearsARequest() {
    var gate = PassGate()
    let first = [gate.begin(), gate.begin()]
    gate.end()
    let second = [gate.begin(), gate.takeRequest()]
    gate.end()
    #expect(first == [true, false])
    #expect(second == [true, false])
  }
}
