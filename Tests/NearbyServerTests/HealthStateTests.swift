import Foundation
@testable import NearbyServer
import Testing

/// `/healthz` answers anyone: it says that the database fails, never how (a database error
/// names hosts, users and tables; the server's log has it).
@Suite("Health state")
struct HealthStateTests {
  @Test func aFailingDatabaseIsReportedWithoutItsError() {
    let health = HealthState(tolerance: .zero)
    #expect(health.problem?.contains("no answer yet") == true)
    health.recordSuccess()
    health.recordFailure()
    let problem = health.problem ?? ""
    #expect(problem.hasPrefix("the database has not answered for"))
    #expect(problem.contains("it fails; the server's log says why"))
  }

  @Test func aDatabaseThatAnsweredLatelyIsHealthy() {
    let health = HealthState(tolerance: .seconds(3600))
    health.recordFailure()
    health.recordSuccess()
    #expect(health.problem == nil)
  }
}
