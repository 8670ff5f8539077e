@_spi(Resolver) package import Core
package import Foundation
@_spi(Resolver) package import Resolution
import Synchronization
import Tokens

/// A report that only refreshes: sightings of devices already near, no handle changes. It is
/// the common report at steady state (devices that keep hearing each other), and a storage
/// that can applies it in one statement (PostgreSQL: `nearby_refresh_report`, made by schema
/// version 9) instead of running the engine over a transaction of several.
///
/// What a refresh changes is what `ResolutionEngine.report` changes for it: each counted
/// sighting's time (set to `now`: it refreshes a sighting still fresh, so no delivery, event
/// or deadline follows) and the device's last report time and revision; its answer is the
/// device's directives and no events. The rules are the engine's, judged ahead of it: a
/// sighting counts when heard within the window (`ResolutionConfiguration.counts`), of a
/// token bound at that time to another device of the reporter's project. Whatever cannot be
/// told for sure this way (a sighting that starts a nearness, a token due, a time within
/// ``DeviceLocks/timeMargin`` of a boundary) is a ``Detour``: the storage changes nothing and
/// the report takes the general path, which decides as it always has.
package struct RefreshReport: Sendable, Hashable {
  /// A sighting that counts by its time, as the statement takes it.
  package struct Heard: Sendable, Hashable {
    /// The token's bits.
    package var token: Int64
    /// When it was heard, in seconds since 1970.
    package var heardAt: Double
    /// The medium's raw value (a single medium).
    package var medium: Int64

    package init(token: Int64, heardAt: Double, medium: Int64) {
      self.token = token
      self.heardAt = heardAt
      self.medium = medium
    }
  }

  /// Why a report takes the general path.
  package enum Detour: String, Sendable, Hashable, CaseIterable {
    /// It publishes, unpublishes, subscribes or unsubscribes.
    case changesHandles
    /// A sighting names no medium, several, or one the engine does not know: the engine
    /// refuses the report.
    case invalidMedium
    /// The device's secret is stored as it was before digests: the engine replaces it.
    case plainSecret
    /// The device's token is due to rotate (or within ``DeviceLocks/timeMargin`` of it).
    case tokenDue
    /// The device was removed, or its stored secret changed, between authentication and
    /// its lock.
    case deviceChanged
    /// A sighting was heard within ``DeviceLocks/timeMargin`` of its token's binding's end.
    case bindingEdge
    /// A counted sighting starts a nearness: none before, or the last one stale (or within
    /// ``DeviceLocks/timeMargin`` of stale).
    case startsNearness
  }

  /// Which way a report goes, as far as the report alone tells.
  package enum Route: Sendable, Hashable {
    case refresh(RefreshReport)
    case general(Detour)
  }

  /// What a storage did with a refresh.
  package enum Outcome: Sendable, Hashable {
    /// Applied: the device's row as it is now.
    case refreshed(DeviceRecord)
    /// Nothing changed; the report goes the general way.
    case detour(Detour)
  }

  /// The device that reports.
  package var device: DeviceID
  /// The sightings that count by their time; which of them count by their token, and
  /// whether each refreshes a fresh sighting, the statement tells.
  package var heard: [Heard]
  /// When the report arrived.
  package var now: Date
  /// The age below which a sighting is fresh for sure (see ``DeviceLocks/freshFor(_:)``).
  package var freshFor: Double

  /// The refresh `report` is, or why it is none, judged from the report alone.
  package static func route(
    _ report: Report, from device: DeviceID, configuration: ResolutionConfiguration, now: Date
  ) -> Route {
    guard report.publish.isEmpty, report.unpublish.isEmpty, report.subscribe.isEmpty,
      report.unsubscribe.isEmpty
    else { return .general(.changesHandles) }
    guard report.sightings.allSatisfy(\.hasOneKnownMedium) else {
      return .general(.invalidMedium)
    }
    let heard = report.sightings.filter { configuration.counts(heardAt: $0.time, now: now) }
      .map {
        Heard(
          token: Int64(bitPattern: $0.token.value), heardAt: $0.time.timeIntervalSince1970,
          medium: Int64($0.medium.rawValue))
      }
    return .refresh(
      RefreshReport(
        device: device, heard: heard, now: now,
        freshFor: DeviceLocks.freshFor(configuration.lostAfter)
      ))
  }

  /// Why the authenticated `device` cannot report this way, judged on the row authentication
  /// read (the statement checks again under the device's lock); nil when it may.
  package func detour(for device: DeviceRecord) -> Detour? {
    if device.holdsPlainSecret { return .plainSecret }
    if device.tokenExpiresAt.timeIntervalSince1970 - now.timeIntervalSince1970
      <= DeviceLocks.timeMargin
    {
      return .tokenDue
    }
    return nil
  }

  /// The answer to a refresh applied to `device` (its row after the refresh): its
  /// directives, as the engine makes them, and no events.
  package func answer(_ device: DeviceRecord) -> ReportAnswer {
    ReportAnswer(directives: device.directives(now: now), events: [])
  }
}

/// What a ``RefreshingStorage`` did with a report.
package enum RefreshResult: Sendable, Hashable {
  /// Applied in one statement: the answer.
  case answered(ReportAnswer)
  /// Nothing changed; the report goes the general way. `authorized`: the request's
  /// `authorize` has run (it takes the device's rate budget, so it does not run again).
  case detour(RefreshReport.Detour, authorized: Bool)
}

/// A storage that applies a ``RefreshReport`` in one statement (``PostgresStorage``).
package protocol RefreshingStorage: ResolverStorage {
  /// Whether refresh reports go this way (a database URL's `refresh=off` says not).
  var refreshesReports: Bool { get }
  /// How many reports went each way.
  var reportRoutes: ReportRoutes { get }
  /// Authenticates the device (one read), runs `authorize`, then applies `refresh` in one
  /// statement, or changes nothing and says why.
  /// - Throws: `ResolverError` for bad credentials, what `authorize` throws, or the
  ///   database's error (nothing applied).
  func refresh(
    _ refresh: RefreshReport, credentials: DeviceCredentials,
    authorize: @escaping @Sendable (DeviceRecord) throws -> Void
  ) async throws -> RefreshResult
}

/// How many reports a storage applied as refreshes, and how many went the general way for
/// each ``RefreshReport/Detour``; tests read it to see which way a report went.
package final class ReportRoutes: Sendable {
  /// A way a report went.
  package enum Way: Sendable, Hashable {
    case refreshed
    case general(RefreshReport.Detour)
  }

  private let counts = Mutex<[Way: Int]>([:])

  package init() {}

  package func note(_ way: Way) { counts.withLock { $0[way, default: 0] += 1 } }

  /// How many reports went `way`.
  package func count(_ way: Way) -> Int { counts.withLock { $0[way] ?? 0 } }

  /// Every way taken, with its count.
  package var all: [Way: Int] { counts.withLock { $0 } }
}
