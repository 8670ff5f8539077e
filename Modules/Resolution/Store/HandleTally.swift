/// A device's handles as the per-device limit sees them: how many it has, and which of the ids
/// a report names it has already (``HandleStore/publicationTally(on:among:)``).
public struct HandleTally<ID: Hashable & Sendable>: Sendable, Equatable {
  /// How many handles of the kind the device has.
  public var count: Int
  /// Those of the asked ids that the device has.
  public var present: Set<ID>

  public init(count: Int, present: Set<ID>) {
    self.count = count
    self.present = present
  }

  /// From the device's whole list of ids.
  public init(all: [ID], among ids: Set<ID>) {
    self.count = all.count
    self.present = ids.intersection(all)
  }

  /// How many the device would have once `removed` are withdrawn and `added` made (an id in
  /// both is withdrawn, then made again).
  public func after(removing removed: Set<ID>, adding added: Set<ID>) -> Int {
    let withdrawn = removed.intersection(present)
    let made = added.subtracting(present.subtracting(removed))
    return count - withdrawn.count + made.count
  }
}
