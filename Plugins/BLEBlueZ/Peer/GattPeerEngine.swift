import Core
import DBus
import Logging

/// The GATT transport's actor: performs what ``GattServiceState`` and each link's
/// ``GattLinkStateMachine`` decide, over D-Bus.
///
/// One task, started with the engine, hosts one loop (GattPeerEngine+Loop.swift): it reads
/// the engine's inputs one at a time (work for a link, a link's wake-up, the end of a D-Bus
/// operation, bluetoothd's return), hands each to the link's machine, and starts what the
/// machine asks (connect, write, read, disconnect, a wake-up at an instant) as a child of its
/// task group, which reports its end as the next input. ``shutdown()`` ends the loop and
/// awaits it. Calls from bluetoothd (a hearer's write or read) and sends from the resolver
/// are requests to the actor; a send that gives a link work tells the loop.
actor GattPeerEngine {
  static let bluez = "org.bluez"

  struct Link {
    var machine: GattLinkStateMachine
    var address: PeerAddress
    var devicePath: String
    var inbox: DBusObjectPath?
    var outbox: DBusObjectPath?
    var reassembly = GattReassembly()
    /// The owner's notifications for this link, when its outbox notifies.
    var notifications: GattNotifiedReassembly?
  }

  let configuration: BlueZPeerTransportConfiguration
  /// The BlueZ configuration's clock (``BlueZConfiguration/clock``): every instant the
  /// machines see, every wake-up and every bounded wait of the engine.
  let clock: NearbyClock
  let connection: DBusConnection
  let logger: Logger
  let incoming: AsyncStream<PeerDatagram>.Continuation
  /// Where a link's datagram that is partly read is reported (``PeerTransport/arriving``).
  let arriving: AsyncStream<PeerAddress>.Continuation
  var adapterPath: DBusObjectPath?
  var service: GattServiceState
  var links: [PeerAddress: Link] = [:]
  /// The wake-up each link waits for, by generation: a wake-up of an older one is stale.
  var wakeUps: [PeerAddress: Int] = [:]
  var nextWakeUp = 0
  var counters = BlueZPeerTransportCounters()
  /// When the owner last notified a chunk (the shutdown gives it a moment to leave).
  var lastNotified: NearbyClock.Instant?
  /// How long the shutdown leaves the last notifications to bluetoothd.
  static let notificationGrace: Duration = .milliseconds(500)
  /// The loop's inputs. Unbounded: what is in it is bounded by the operations under way (one
  /// end each) and the sends the links' queues accepted (one each).
  let inputs: AsyncStream<Input>
  let inputsContinuation: AsyncStream<Input>.Continuation
  var lifecycle = Lifecycle.starting

  init(
    configuration: BlueZPeerTransportConfiguration,
    incoming: AsyncStream<PeerDatagram>.Continuation,
    arriving: AsyncStream<PeerAddress>.Continuation, logger: Logger
  ) async throws {
    self.configuration = configuration
    clock = NearbyClock(configuration.bluez.clock)
    self.incoming = incoming
    self.arriving = arriving
    self.logger = logger
    (inputs, inputsContinuation) = AsyncStream.makeStream(of: Input.self)
    service = GattServiceState(
      configuration: GattServiceState.Configuration(keepFor: configuration.keepFor))
    connection = try await DBusConnection(configuration.bluez.bus, logger: logger)
    do {
      try await start()
    } catch {
      connection.close()
      incoming.finish()
      arriving.finish()
      throw error
    }
  }

  private func start() async throws {
    // Before any subscription, so that no notification can come before it: bluetoothd
    // signals each as a change of the remote characteristic's value.
    let inputs = inputsContinuation
    try await onPropertiesChanged(of: "org.bluez.GattCharacteristic1") { path, changed in
      guard let value = changed["Value"]?.bytes else { return }
      inputs.yield(.notification(path, value))
    }
    // A hearer's disconnection ends its listener here (see GattServiceState).
    try await onPropertiesChanged(of: "org.bluez.Device1") { path, changed in
      guard changed["Connected"]?.bool == false else { return }
      inputs.yield(.deviceDisconnected(path))
    }
    try await GattApplication.export(
      on: connection,
      write: { [weak self] value, options in
        guard let self else { throw DBusError(.failed, "shut down") }
        try await self.written(value, options)
      },
      read: { [weak self] options in
        guard let self else { throw DBusError(.failed, "shut down") }
        return try await self.readRequested(options)
      })
    let owners = try await connection.nameOwnerChanges(of: Self.bluez)
    try await register()
    lifecycle = .running(startLoop(owners: owners))
  }

  /// Runs `handle` on the D-Bus connection's thread with the path and the changed properties
  /// of each `PropertiesChanged` bluetoothd signals for `interface` (it must not block).
  private func onPropertiesChanged(
    of interface: String,
    _ handle: @escaping @Sendable (DBusObjectPath, [String: DBusValue]) -> Void
  ) async throws(DBusError) {
    try await connection.handleSignals(
      matching: DBusMatchRule(
        sender: Self.bluez, interface: "org.freedesktop.DBus.Properties",
        member: "PropertiesChanged", arguments: [0: interface])
    ) { signal in
      guard let path = signal.path, signal.body.count > 1,
        let changed = signal.body[1].stringDictionary
      else { return }
      handle(path, changed)
    }
  }

  deinit {
    // The loop holds the engine weakly: released without a shutdown, it ends here.
    inputsContinuation.finish()
  }

  /// Picks the adapter and registers the application there.
  func register() async throws {
    let objects = try await connection.managedObjects(
      of: Self.bluez, timeout: configuration.bluez.callTimeout)
    let adapters = objects.filter { $0.value["org.bluez.GattManager1"] != nil }
    let wanted = configuration.bluez.adapter
    let sorted = adapters.keys.sorted()
    let chosen =
      if let wanted {
        sorted.first { $0.rawValue.split(separator: "/").last.map(String.init) == wanted }
      } else {
        sorted.first { adapters[$0]?["org.bluez.Adapter1"]?["Powered"]?.bool == true }
          ?? sorted.first
      }
    guard let chosen else {
      throw BlueZMediumError.poweredOff(BlueZFix.noAdapter(wanted))
    }
    adapterPath = chosen
    do {
      _ = try await connection.call(
        destination: Self.bluez, path: chosen, interface: "org.bluez.GattManager1",
        member: "RegisterApplication", [.objectPath(GattApplication.root), .vardict([:])],
        timeout: configuration.bluez.callTimeout)
      logger.debug("ble gatt: peer service registered on \(chosen)")
    } catch let error where error.name.rawValue == "org.bluez.Error.AlreadyExists" {
      // Registered already (a restart notice that raced our own registration).
    } catch {
      throw BlueZMediumError.bluez(error)
    }
  }

  // MARK: Owner side: calls from bluetoothd

  func written(_ chunk: [UInt8], _ options: GattApplication.CallOptions) throws(DBusError) {
    guard options.offset + chunk.count <= GattPeerProfile.maximumChunk else {
      throw DBusError(.init("org.bluez.Error.InvalidValueLength"), "a chunk is 512 bytes at most")
    }
    let written = service.write(chunk, offset: options.offset, by: options.device, now: clock.now)
    notify(written.notify)
    guard let datagram = written.datagram else {
      counters.dropped = service.dropped + linkDrops
      return
    }
    guard let address = BLEPeerAddress.address(ofDevicePath: options.device),
      let sender = BLEPeerAddress.make(role: .client, address: address, isRandom: false)
    else { return }
    counters.datagramsReceived += 1
    incoming.yield(PeerDatagram(bytes: datagram, sender: sender))
  }

  func readRequested(_ options: GattApplication.CallOptions) throws(DBusError) -> [UInt8] {
    do {
      return try service.read(by: options.device, offset: options.offset, now: clock.now)
    } catch {
      throw DBusError(.init("org.bluez.Error.InvalidOffset"), "no such offset")
    }
  }

  // MARK: Sending

  func send(_ datagram: [UInt8], to address: PeerAddress) throws(BlueZPeerTransportError) {
    guard !isShutDown else { throw .shutDown }
    guard let parts = BLEPeerAddress.parts(address) else { throw .notABLEAddress(address) }
    guard datagram.count <= GattPeerProfile.maximumDatagramSize else {
      throw .tooLarge(bytes: datagram.count, limit: GattPeerProfile.maximumDatagramSize)
    }
    let now = clock.now
    switch parts.role {
    case .client:
      guard let adapterPath else { throw .shutDown }
      let device = BLEPeerAddress.devicePath(
        adapterPath: adapterPath.rawValue, address: parts.address)
      switch service.queue(datagram, for: device, now: now) {
      case .waiting: break
      case .notify(let chunks): notify(chunks)
      case .refused: throw .queueFull(address)
      }
    case .advertiser:
      if links[address] == nil {
        let linked = links.values.filter { $0.machine.isLinked }.count
        guard linked < configuration.maximumLinks else {
          throw .tooManyLinks(limit: configuration.maximumLinks)
        }
        pruneLinks()
        guard let adapterPath else { throw .shutDown }
        var machineConfiguration = GattLinkStateMachine.Configuration()
        machineConfiguration.idleTimeout = configuration.idleTimeout
        links[address] = Link(
          machine: GattLinkStateMachine(configuration: machineConfiguration, now: now),
          address: address,
          devicePath: BLEPeerAddress.devicePath(
            adapterPath: adapterPath.rawValue, address: parts.address))
      }
      let refusal = links[address]!.machine.enqueueing(datagram, now: now)
      switch refusal {
      case nil: break
      case .queueFull?: throw .queueFull(address)
      case .backingOff?: throw .backingOff(address)
      }
      inputsContinuation.yield(.drive(address))
    }
  }

  /// Notifies `chunks`, in order: bluetoothd sends each to every device subscribed to the
  /// outbox (each keeps its own tag's). A signal the bus refuses is dropped (the exchange
  /// asks again).
  func notify(_ chunks: [[UInt8]]) {
    for chunk in chunks {
      do {
        try connection.emit(
          .signal(
            path: GattApplication.outbox, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged",
            body: [
              .string("org.bluez.GattCharacteristic1"), .vardict(["Value": .bytes(chunk)]),
              .strings([]),
            ]))
        counters.chunksNotified += 1
        lastNotified = clock.now
      } catch {
        counters.dropped += 1
        logger.debug("ble gatt: a notification was not sent: \(error)")
      }
    }
  }

  /// Forgets links with nothing to do, beyond 64 of them.
  private func pruneLinks() {
    guard links.count >= 64 else { return }
    for (address, link) in links where !link.machine.isLinked {
      links[address] = nil
    }
  }

  var linkDrops: Int { links.values.reduce(0) { $0 + $1.machine.dropped } }

  // MARK: Driving a link

  /// Asks the link's machine what to do: the operation (or wake-up) to start.
  func drive(_ address: PeerAddress) -> [Effect] {
    guard !isShutDown, var link = links[address] else { return [] }
    let action = link.machine.next(now: clock.now)
    links[address] = link
    switch action {
    case .subscribe:
      // Beside the link's operations: the next one is asked for at once.
      guard let outbox = link.outbox, let tag = link.notifications?.tag else {
        return subscribeFinished(address, tag: link.notifications?.tag ?? 0, false)
      }
      return [.subscribe(address, outbox: outbox, tag: tag)] + drive(address)
    case .busy, .idle:
      return []
    case .wait(let until):
      nextWakeUp += 1
      wakeUps[address] = nextWakeUp
      return [.wake(address, at: until, generation: nextWakeUp)]
    case .connect:
      return [.connect(address, devicePath: link.devicePath)]
    case .write(let chunk):
      // Without an inbox (the machine writes only once connected, so it cannot happen) the
      // write fails, so that the link cannot stay busy forever.
      guard let inbox = link.inbox else { return writeFinished(address, false) }
      return [.write(address, inbox: inbox, chunk: chunk)]
    case .read:
      guard let outbox = link.outbox else { return readFinished(address, nil) }
      return [.read(address, outbox: outbox)]
    case .disconnect:
      return [.disconnect(address, devicePath: link.devicePath)]
    }
  }

  /// A wake-up fired: the link is driven unless a newer wake-up took its place.
  func wokeUp(_ address: PeerAddress, generation: Int) -> [Effect] {
    guard wakeUps[address] == generation else { return [] }
    wakeUps[address] = nil
    if let taken = links[address]?.notifications?.expire(now: clock.now),
      !taken.datagrams.isEmpty || taken.dropped > 0
    {
      return took(taken, from: address, now: clock.now)
    }
    return drive(address)
  }

  func connectFinished(_ address: PeerAddress, _ result: Result<Endpoints, any Error>) -> [Effect] {
    guard links[address] != nil else { return [] }
    switch result {
    case .success(let endpoints):
      counters.connects += 1
      links[address]!.inbox = endpoints.inbox
      links[address]!.outbox = endpoints.outbox
      links[address]!.reassembly = GattReassembly()
      // A tag drawn anew for each connection: it marks this link's notifications among those
      // of every device subscribed to the owner's outbox.
      let tag =
        endpoints.notifies && configuration.notifications ? UInt32.random(in: 1...(.max)) : nil
      links[address]!.notifications = tag.map { GattNotifiedReassembly(tag: $0) }
      links[address]!.machine.connected(mtu: endpoints.mtu, listenTag: tag, now: clock.now)
      logger.debug(
        "ble gatt: linked to \(address) (MTU \(endpoints.mtu), notifies: \(endpoints.notifies))")
    case .failure(let error):
      counters.connectFailures += 1
      links[address]!.machine.connectFailed(now: clock.now)
      counters.dropped = service.dropped + linkDrops
      logger.debug("ble gatt: no link to \(address): \(error)")
    }
    return drive(address)
  }

  func writeFinished(_ address: PeerAddress, _ ok: Bool) -> [Effect] {
    guard links[address] != nil else { return [] }
    if ok {
      counters.chunksWritten += 1
      links[address]!.machine.wrote(now: clock.now)
    } else {
      links[address]!.machine.operationFailed(now: clock.now)
      counters.dropped = service.dropped + linkDrops
    }
    return drive(address)
  }

  func readFinished(_ address: PeerAddress, _ chunk: [UInt8]?) -> [Effect] {
    guard links[address] != nil else { return [] }
    guard let chunk else {
      links[address]!.machine.operationFailed(now: clock.now)
      counters.dropped = service.dropped + linkDrops
      return drive(address)
    }
    links[address]!.machine.read(chunk, now: clock.now)
    if !chunk.isEmpty {
      counters.chunksRead += 1
      counters.bytesRead += chunk.count
      switch links[address]!.reassembly.take(chunk) {
      case .datagram(let datagram):
        counters.datagramsReceived += 1
        incoming.yield(PeerDatagram(bytes: datagram, sender: address))
      case .partial: arriving.yield(address)
      case .dropped: counters.dropped += 1
      }
    }
    return drive(address)
  }

  func disconnectFinished(_ address: PeerAddress) -> [Effect] {
    guard links[address] != nil else { return [] }
    links[address]!.machine.disconnected(now: clock.now)
    links[address]!.inbox = nil
    links[address]!.outbox = nil
    links[address]!.notifications = nil
    return drive(address)
  }

  /// The subscription of the link's connection that drew `tag` went through (its listen chunk
  /// is written next), or not (it reads then); nothing for an earlier connection's.
  func subscribeFinished(_ address: PeerAddress, tag: UInt32, _ ok: Bool) -> [Effect] {
    guard links[address]?.notifications?.tag == tag else { return drive(address) }
    if ok {
      counters.subscriptions += 1
    } else {
      counters.subscriptionFailures += 1
    }
    links[address]!.machine.subscribed(ok, now: clock.now)
    return drive(address)
  }

  /// bluetoothd signalled a new value of a remote characteristic at `path`: a notification of
  /// an owner's outbox (or a read's value, or another app's characteristic: not ours).
  func notification(at path: DBusObjectPath, _ value: [UInt8]) -> [Effect] {
    guard
      let address = links.first(where: {
        $0.value.outbox == path && $0.value.notifications != nil
      })?.key
    else { return [] }
    let now = clock.now
    let taken = links[address]!.notifications!.take(value, now: now)
    guard taken.ours else { return [] }
    counters.chunksNotifiedIn += 1
    return took(taken, from: address, now: now)
  }

  /// Hands on what the notifications of the link to `address` gave.
  private func took(
    _ taken: GattNotifiedReassembly.Taken, from address: PeerAddress, now: NearbyClock.Instant
  )
    -> [Effect]
  {
    counters.dropped += taken.dropped
    if taken.acknowledged {
      links[address]!.machine.acknowledged(now: now)
      logger.debug("ble gatt: \(address) notifies this link")
    }
    links[address]!.machine.notified(now: now)
    for datagram in taken.datagrams {
      counters.datagramsReceived += 1
      incoming.yield(PeerDatagram(bytes: datagram, sender: address))
    }
    // Notified chunks are not reported as arriving (read chunks are): a notified datagram
    // streams in well under a query timeout, so its fragments mark the progress, and nothing
    // sends a notified chunk again once it is lost. The retry of a stream that took longer
    // than a query timeout to start is then what repairs a lost chunk: in the VM, reporting
    // notified chunks too saved that retry, but a lost chunk then cost a whole answer more
    // after the stream (rounds of 7.4 s and 20.7 s where 3–4 s was usual).
    return drive(address)
  }

  // MARK: D-Bus operations (run in the tasks `drive` starts)

  /// A call to a remote characteristic; nil when it failed.
  nonisolated func callDevice(_ path: DBusObjectPath, _ member: String, _ arguments: [DBusValue])
    async -> [DBusValue]?
  {
    do {
      return try await connection.call(
        destination: Self.bluez, path: path, interface: "org.bluez.GattCharacteristic1",
        member: member, arguments, timeout: configuration.bluez.callTimeout)
    } catch {
      logger.debug("ble gatt: \(member) on \(path) failed: \(error)")
      return nil
    }
  }

  /// A link's characteristics and MTU.
  struct Endpoints: Sendable {
    var inbox: DBusObjectPath
    var outbox: DBusObjectPath
    var mtu: Int
    /// Whether the outbox notifies (its flags say so).
    var notifies = false
  }

  /// Connects to the device, waits for its services, finds ours. Connected but without them
  /// (not resolved in time, or not served), it lets the connection go: the next attempt then
  /// gets a new ATT bearer and a new discovery, not the same stale one.
  /// - Throws: BlueZ's error (the connection failed), a timeout, or ``DBusError`` `failed`
  ///   when the device does not serve peer resolution.
  nonisolated func connect(_ devicePath: String) async throws -> Endpoints {
    let deadline = clock.now + configuration.connectTimeout
    let device = try DBusObjectPath(devicePath)
    try await connectDevice(device)
    do {
      return try await service(of: device, at: devicePath, until: deadline)
    } catch {
      _ = try? await connection.call(
        destination: Self.bluez, path: device, interface: "org.bluez.Device1",
        member: "Disconnect", timeout: configuration.bluez.callTimeout)
      throw error
    }
  }

  /// Waits for the connected device's services to be resolved, then finds ours among them.
  private nonisolated func service(
    of device: DBusObjectPath, at devicePath: String, until deadline: NearbyClock.Instant
  ) async throws -> Endpoints {
    while true {
      let resolved = try await connection.property(
        "ServicesResolved", interface: "org.bluez.Device1", of: Self.bluez, at: device,
        timeout: configuration.bluez.callTimeout)
      if resolved.bool == true { break }
      guard clock.now < deadline else {
        throw DBusError(.noReply, "the device's services were not resolved in time")
      }
      try await clock.sleep(for: .milliseconds(50))
    }
    let objects = try await connection.managedObjects(
      of: Self.bluez, timeout: configuration.bluez.callTimeout)
    if let endpoints = Self.endpoints(in: objects, under: devicePath) { return endpoints }
    throw DBusError(.failed, "the device does not serve peer resolution")
  }

  /// `Device1.Connect`; a device connected already is fine.
  nonisolated func connectDevice(_ device: DBusObjectPath) async throws {
    do {
      _ = try await connection.call(
        destination: Self.bluez, path: device, interface: "org.bluez.Device1", member: "Connect",
        timeout: configuration.connectTimeout)
    } catch {
      guard error.name.rawValue == "org.bluez.Error.AlreadyConnected" else { throw error }
    }
  }

  /// Our inbox and outbox among BlueZ's objects under the device, with the link's MTU.
  static func endpoints(in objects: DBusConnection.ManagedObjects, under devicePath: String)
    -> Endpoints?
  {
    var inbox: DBusObjectPath?
    var outbox: DBusObjectPath?
    var mtu = GattPeerProfile.minimumMTU
    var notifies = false
    // In path order: while bluetoothd replaces a changed database's objects, the service
    // registered last (the higher handles) wins.
    for (path, interfaces) in objects.sorted(by: { $0.key < $1.key })
    where path.rawValue.hasPrefix(devicePath + "/") {
      guard let characteristic = interfaces["org.bluez.GattCharacteristic1"],
        let uuid = characteristic["UUID"]?.string?.lowercased()
      else { continue }
      if uuid == GattPeerProfile.inboxUUID { inbox = path }
      if uuid == GattPeerProfile.outboxUUID {
        outbox = path
        if let value = characteristic["MTU"]?.integer { mtu = Int(value) }
        notifies =
          characteristic["Flags"]?.elements?.contains { $0.string == "notify" } ?? false
      }
    }
    guard let inbox, let outbox else { return nil }
    return Endpoints(inbox: inbox, outbox: outbox, mtu: mtu, notifies: notifies)
  }

  /// Whether a link to an owner reads at its slow poll now
  /// (``GattLinkStateMachine/isSlowPolling(at:)``): tests wait for it.
  var anyLinkSlowPolling: Bool {
    let now = clock.now
    return links.values.contains { $0.machine.isSlowPolling(at: now) }
  }

  /// Waits (at most the drain timeout) for connected hearers to read what waits for them,
  /// then ends the loop (cancelling the operations under way and awaiting them), disconnects
  /// the linked devices, unregisters the application and closes the connection. A second
  /// call returns at once.
  func shutdown() async {
    guard !isShutDown else { return }
    // What waits for connected hearers (an unpublish's update, sent just before) is read
    // within a poll (1 s): wait for it, boundedly, before the service goes.
    let deadline = clock.now + configuration.drainTimeout
    while service.hasWaiting(now: clock.now), clock.now < deadline {
      try? await clock.sleep(for: .milliseconds(50))
    }
    // What was just notified (an unpublish's update to a listening hearer) is on its way
    // through bluetoothd, which says nothing when it is sent: a moment for it before the
    // service goes and the links drop.
    if let lastNotified {
      let settled = min(lastNotified + Self.notificationGrace, deadline)
      if clock.now < settled { try? await clock.sleep(until: settled) }
    }
    guard case .running(let loop) = lifecycle else { return }
    lifecycle = .shutDown
    let linked = links.values.filter { $0.machine.isLinked }.map(\.devicePath)
    inputsContinuation.finish()
    loop.cancel()
    await loop.value
    for path in linked {
      _ = try? await connection.call(
        destination: Self.bluez, path: try DBusObjectPath(path), interface: "org.bluez.Device1",
        member: "Disconnect", timeout: configuration.bluez.callTimeout)
    }
    if let adapterPath {
      _ = try? await connection.call(
        destination: Self.bluez, path: adapterPath, interface: "org.bluez.GattManager1",
        member: "UnregisterApplication", [.objectPath(GattApplication.root)],
        timeout: configuration.bluez.callTimeout)
    }
    links = [:]
    incoming.finish()
    arriving.finish()
    connection.close()
  }
}
