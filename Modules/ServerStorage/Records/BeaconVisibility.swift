public import Core
public import Resolution

/// A beacon as one project may see it after observing it (`beaconinfo:getforobserved`).
public struct VisibleBeacon: Sendable, Hashable {
  /// The id the project observed (for an Eddystone-EID beacon, the rotating id on the air).
  public var observedID: BeaconID
  /// The beacon: the project's own record, with the attachments its filters match; or, for
  /// another project's beacon, a record that holds nothing but its creation time, named by
  /// ``observedID``.
  public var beacon: BeaconRecord
  /// Whether ``beacon`` is the project's own.
  public var isOwn: Bool
  /// Attachments from other projects' public namespaces, in the order of those projects.
  public var sharedAttachments: [AttachmentRecord]
}

/// Which beacons, and which of their attachments, a project may see of the beacons it
/// observed: the rule `beaconinfo:getforobserved` applies, apart from HTTP and SQL.
///
/// - Its own beacons: whole, with the attachments its filters match.
/// - Another project's beacon: only the attachments in that project's public namespaces that
///   the filters name and match; nothing else of it (no description, status, metadata or EID
///   parameters), and named by the id observed: its registered name (for an EID beacon, the id
///   it sent when it was registered) would link its rotating ids for another project.
/// - A beacon neither its own nor sharing a matching attachment: absent.
public enum BeaconVisibility {
  /// Another project's beacons a project observed, with the public namespaces of that project
  /// its filters name.
  public struct Foreign: Sendable {
    public var namespaces: Set<String>
    public var beacons: [BeaconID: BeaconRecord]

    public init(namespaces: Set<String>, beacons: [BeaconID: BeaconRecord]) {
      self.namespaces = namespaces
      self.beacons = beacons
    }
  }

  /// What the project may see of `observed` (in that order, each id once as given), from its
  /// own beacons by observed id, the other projects' (in the order given) and its filters.
  public static func visible(
    observed: [BeaconID], own: [BeaconID: BeaconRecord], foreign: [Foreign],
    filters: NamespacedTypeFilter
  ) -> [VisibleBeacon] {
    var shared: [BeaconID: (record: BeaconRecord, attachments: [AttachmentRecord])] = [:]
    for project in foreign {
      for (id, record) in project.beacons {
        let attachments = record.attachments.filter {
          project.namespaces.contains($0.namespace)
            && filters.matches(namespace: $0.namespace, type: $0.type)
        }
        guard !attachments.isEmpty else { continue }
        shared[id, default: (record, [])].attachments += attachments
      }
    }
    return observed.compactMap { id in
      let sharedAttachments = shared[id]?.attachments ?? []
      if var mine = own[id] {
        mine.attachments = mine.attachments.filter {
          filters.matches(namespace: $0.namespace, type: $0.type)
        }
        return VisibleBeacon(
          observedID: id, beacon: mine, isOwn: true, sharedAttachments: sharedAttachments)
      }
      guard let theirs = shared[id]?.record else { return nil }
      let stripped = BeaconRecord(
        project: theirs.project, advertisedID: id, description: "", createdAt: theirs.createdAt,
        attachments: [], eid: nil)
      return VisibleBeacon(
        observedID: id, beacon: stripped, isOwn: false, sharedAttachments: sharedAttachments)
    }
  }
}
