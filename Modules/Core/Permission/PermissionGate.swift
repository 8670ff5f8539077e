public import Logging

/// How an app asks the user for Nearby permission itself (the seed's custom pre-prompt):
/// show your own dialog, then call `respond` once with the user's answer. Called on the
/// manager's actor; `respond` may be called from any thread, later calls are ignored. No
/// answer within ``MessageManager/Configuration/permissionRequestTimeout`` counts as denied.
public typealias PermissionRequestHandler =
  @Sendable (_ respond: @escaping @Sendable (Bool) -> Void) -> Void

/// Where a manager keeps and asks for the user's Nearby permission (the seed's consent).
///
/// Core only consults it; `PermissionStore`'s `NearbyPermission` implements it over the app's
/// defaults file. A manager configured without one (``MessageManager/Configuration/permission``
/// `nil`) treats permission as granted.
///
/// On the first publish or subscribe with no recorded answer, the manager asks: the
/// params' ``PublicationParams/permissionRequestHandler`` when given, else ``ask(logger:)``,
/// and records a real answer with ``record(_:)``. While permission is not granted no
/// publication or subscription runs: their status is ``HandleStatus/paused``, and they resume
/// when ``answers()`` reports a grant.
public protocol PermissionGate: Sendable {
  /// The recorded answer: `true` granted, `false` denied, `nil` never answered.
  func answer() async -> Bool?
  /// Records the user's answer.
  func record(_ granted: Bool) async throws
  /// Asks the user when the app gave no handler (for example a y/n prompt on a terminal).
  /// Returns `nil` when nobody could be asked.
  func ask(logger: Logger) async -> Bool?
  /// What to tell a user who wants to grant permission later (a command or an API call).
  var howToGrant: String { get }
  /// The answer each time it changes, here or in another process; `nil` when it is cleared.
  func answers() -> AsyncStream<Bool?>
}
