import Testing

@testable import NearbyServer

/// Each instance allows its share of a rate meant for all instances together.
@Suite("Rate limiter")
struct RateLimiterTests {
  @Test func twoInstancesHalveTheBurst() async {
    let limiter = RateLimiter(rate: 0.001, burst: 10)
    await limiter.setInstances(2)
    var allowed = 0
    for _ in 0..<10 where await limiter.take("key") == nil { allowed += 1 }
    #expect(allowed == 5)
    #expect(await limiter.exhausted("key") != nil)
    #expect(await limiter.exhausted("other") == nil)
  }

  @Test func madeUpSubjectsDoNotGrowTheTable() async {
    let limiter = RateLimiter(rate: 1_000_000, burst: 1, capacity: 100)
    for index in 0..<1_000 { _ = await limiter.take("subject \(index)") }
    #expect(await limiter.bucketCount <= 100)
  }
}
