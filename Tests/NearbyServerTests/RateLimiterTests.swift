import Testing

@testable import NearbyServer

/// Each instance allows its share of a rate meant for all instances together.
@Suite("Rate limiter")
struct RateLimiterTests {
  @Test func twoInstancesHalveTheBurst() async {
    let limiter = RateLimiter(rate: 0.001, burst: 10)
    limiter.setInstances(2)
    var allowed = 0
    for _ in 0..<10 where limiter.take("key") == nil { allowed += 1 }
    #expect(allowed == 5)
    #expect(limiter.exhausted("key") != nil)
    #expect(limiter.exhausted("other") == nil)
  }

  @Test func madeUpSubjectsDoNotGrowTheTable() async {
    let limiter = RateLimiter(rate: 1_000_000, burst: 1, capacity: 100)
    for index in 0..<1_000 { _ = limiter.take("subject \(index)") }
    #expect(limiter.bucketCount <= 100)
  }
}
