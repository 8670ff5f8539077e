import Core
import Foundation

/// Why ``InProcessResolver/registerBeacon(apiKey:id:eid:attachments:)`` refused a beacon.
public enum BeaconRegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The project has a beacon of this name already.
  case alreadyRegistered(String)
  /// No such beacon in the project.
  case unknownBeacon(String)
  /// The EID parameters or the id are wrong; the text names the problem.
  case eid(EddystoneEIDError)
  /// An Eddystone-EID beacon needs its EID parameters, and only it takes them.
  case eidParameters(String)

  public var description: String {
    switch self {
    case .alreadyRegistered(let name): "beacon \(name) is registered already"
    case .unknownBeacon(let name): "no beacon \(name) in this project"
    case .eid(let error): error.description
    case .eidParameters(let why): why
    }
  }
}

/// The in-process resolver's beacons: per project, by name, with attachments; EID beacons are
/// found through an ``EddystoneEIDIndex`` rebuilt when it runs out or the project's beacons
/// change.
struct InProcessBeaconRegistry {
  struct Beacon {
    var id: BeaconID
    var eid: EddystoneEIDRegistration?
    var attachments: [BeaconAttachment]
  }

  private var projects: [String: [String: Beacon]] = [:]
  private var indexes: [String: EddystoneEIDIndex<String>] = [:]

  mutating func register(
    project: String, id: BeaconID, eid: EddystoneEIDParameters?, attachments: [BeaconAttachment],
    now: Date
  ) throws(BeaconRegistrationError) -> String {
    let name = id.description
    guard projects[project]?[name] == nil else { throw .alreadyRegistered(name) }
    var registration: EddystoneEIDRegistration?
    switch (id, eid) {
    case (.eddystoneEID(let bytes), let parameters?):
      do { registration = try parameters.register(eid: Array(bytes), at: now) } catch {
        throw .eid(error)
      }
    case (.eddystoneEID, nil):
      throw .eidParameters(
        "an Eddystone-EID beacon needs its identity key, rotation exponent and clock value")
    case (_, _?):
      throw .eidParameters("EID parameters are for Eddystone-EID beacons only, not \(id.kindName)")
    case (_, nil): break
    }
    projects[project, default: [:]][name] = Beacon(
      id: id, eid: registration, attachments: attachments)
    indexes[project] = nil
    return name
  }

  mutating func attach(project: String, beacon name: String, _ attachment: BeaconAttachment)
    throws(BeaconRegistrationError)
  {
    guard projects[project]?[name] != nil else { throw .unknownBeacon(name) }
    projects[project]?[name]?.attachments.append(attachment)
  }

  mutating func remove(project: String, name: String) -> Bool {
    guard projects[project]?.removeValue(forKey: name) != nil else { return false }
    indexes[project] = nil
    return true
  }

  /// The registered beacons that `observed` ids belong to, with the attachments matching
  /// `namespacedTypes`; unknown ids are left out, each observed id answers once.
  mutating func info(
    project: String, observed: [BeaconID], namespacedTypes: [String], now: Date
  ) -> [BeaconInfo] {
    guard let beacons = projects[project] else { return [] }
    let filters = NamespacedTypeFilter(namespacedTypes)
    var seen = Set<BeaconID>()
    return observed.compactMap { id in
      guard seen.insert(id).inserted else { return nil }
      let name: String?
      if case .eddystoneEID(let bytes) = id {
        name = eidIndex(project: project, beacons: beacons, now: now).beacon(
          for: Array(bytes), at: now)
      } else {
        name = beacons[id.description] == nil ? nil : id.description
      }
      guard let name, let beacon = beacons[name] else { return nil }
      let attachments = beacon.attachments.filter {
        filters.matches(namespace: $0.namespace, type: $0.type)
      }
      return BeaconInfo(observed: id, beaconName: name, attachments: attachments)
    }
  }

  private mutating func eidIndex(project: String, beacons: [String: Beacon], now: Date)
    -> EddystoneEIDIndex<String>
  {
    if let index = indexes[project], index.covers(now) { return index }
    let index = EddystoneEIDIndex(
      beacons: beacons.compactMap { name, beacon in
        beacon.eid.map { (beacon: name, registration: $0) }
      }, at: now)
    indexes[project] = index
    return index
  }
}
