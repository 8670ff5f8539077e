import Core
import DBus

extension GattPeerEngine {
  /// What the loop reads, one at a time.
  enum Input: Sendable {
    /// A link was given work (a datagram queued to send).
    case drive(PeerAddress)
    /// A link's wake-up fired (stale unless it is the link's latest).
    case wake(PeerAddress, generation: Int)
    /// A connection ended: the link's endpoints, or why not.
    case connected(PeerAddress, Result<Endpoints, any Error>)
    /// A write ended (true: written).
    case wrote(PeerAddress, Bool)
    /// A read ended: the chunk read, or nil when it failed.
    case read(PeerAddress, [UInt8]?)
    /// A disconnection ended.
    case disconnected(PeerAddress)
    /// A subscription of the connection that drew `tag` ended (true: it went through).
    case subscribed(PeerAddress, tag: UInt32, Bool)
    /// bluetoothd signalled a new value of the remote characteristic at this path.
    case notification(DBusObjectPath, [UInt8])
    /// bluetoothd signalled that the device at this path disconnected.
    case deviceDisconnected(DBusObjectPath)
    /// bluetoothd is back on the bus: it forgot the application.
    case bluezReturned
  }

  /// What the loop starts as a child task; each reports its end as an ``Input``.
  enum Effect: Sendable {
    case wake(PeerAddress, at: NearbyClock.Instant, generation: Int)
    case connect(PeerAddress, devicePath: String)
    case write(PeerAddress, inbox: DBusObjectPath, chunk: [UInt8])
    case read(PeerAddress, outbox: DBusObjectPath)
    case disconnect(PeerAddress, devicePath: String)
    case subscribe(PeerAddress, outbox: DBusObjectPath, tag: UInt32)
    /// Registers the application again, tried for about 10 s (the adapters of a bluetoothd
    /// that just came back may take a moment to appear).
    case register
  }

  /// Where the engine is in its life.
  enum Lifecycle {
    /// Exporting and registering its application: no loop yet.
    case starting
    /// The loop runs in this task.
    case running(Task<Void, Never>)
    /// ``shutdown()`` ended the loop.
    case shutDown
  }

  var isShutDown: Bool {
    if case .shutDown = lifecycle { return true }
    return false
  }

  /// The engine's one task: the loop over its inputs, with a child per operation under way
  /// and one that turns bluetoothd's returns (`owners`) into inputs. It holds the engine
  /// weakly; the end of the inputs (shutdown, or the engine's release) ends it.
  func startLoop(owners: AsyncStream<(old: String, new: String)>) -> Task<Void, Never> {
    let (inputs, continuation) = (self.inputs, inputsContinuation)
    return Task { [weak self] in
      await withDiscardingTaskGroup { group in
        group.addTask {
          for await change in owners where !change.new.isEmpty {
            continuation.yield(.bluezReturned)
          }
        }
        for await input in inputs {
          guard let self else { break }
          for effect in await self.handle(input) {
            group.addTask { [weak self] in
              guard let input = await self?.perform(effect) else { return }
              continuation.yield(input)
            }
          }
        }
        group.cancelAll()
      }
    }
  }

  private func handle(_ input: Input) -> [Effect] {
    guard !isShutDown else { return [] }
    switch input {
    case .drive(let address): return drive(address)
    case .wake(let address, let generation): return wokeUp(address, generation: generation)
    case .connected(let address, let result): return connectFinished(address, result)
    case .wrote(let address, let ok): return writeFinished(address, ok)
    case .read(let address, let chunk): return readFinished(address, chunk)
    case .disconnected(let address): return disconnectFinished(address)
    case .subscribed(let address, let tag, let ok): return subscribeFinished(address, tag: tag, ok)
    case .notification(let path, let value): return notification(at: path, value)
    case .deviceDisconnected(let path):
      // An owner's listener goes with its hearer's connection.
      service.disconnected(path.rawValue)
      return []
    case .bluezReturned: return [.register]
    }
  }

  /// Performs `effect` (in a child task of the loop) and says how it ended; nil when it has
  /// nothing to report (a cancelled wake-up, a registration).
  private nonisolated func perform(_ effect: Effect) async -> Input? {
    switch effect {
    case .wake(let address, let until, let generation):
      do {
        try await clock.sleep(until: until)
      } catch {
        return nil
      }
      return .wake(address, generation: generation)
    case .connect(let address, let path):
      do {
        return .connected(address, .success(try await connect(path)))
      } catch {
        return .connected(address, .failure(error))
      }
    case .write(let address, let inbox, let chunk):
      let reply = await callDevice(
        inbox, "WriteValue", [.bytes(chunk), .vardict(["type": .string("request")])])
      return .wrote(address, reply != nil)
    case .read(let address, let outbox):
      let reply = await callDevice(outbox, "ReadValue", [.vardict([:])])
      return .read(address, reply.map { $0.first?.bytes ?? [] })
    case .subscribe(let address, let outbox, let tag):
      // StartNotify answers once the owner's CCC is written.
      do {
        _ = try await connection.call(
          destination: Self.bluez, path: outbox, interface: "org.bluez.GattCharacteristic1",
          member: "StartNotify", timeout: configuration.bluez.callTimeout)
        return .subscribed(address, tag: tag, true)
      } catch  where Self.alreadyNotifying(error) {
        // bluetoothd keeps a client's session across the device's connections: it notifies
        // this one too.
        return .subscribed(address, tag: tag, true)
      } catch {
        logger.debug("ble gatt: StartNotify on \(outbox) failed: \(error)")
        return .subscribed(address, tag: tag, false)
      }
    case .disconnect(let address, let path):
      _ = try? await connection.call(
        destination: Self.bluez, path: try DBusObjectPath(path), interface: "org.bluez.Device1",
        member: "Disconnect", timeout: configuration.bluez.callTimeout)
      return .disconnected(address)
    case .register:
      for attempt in 1...20 {
        guard !Task.isCancelled else { return nil }
        do {
          try await register()
          return nil
        } catch {
          if attempt == 20 {
            logger.warning("ble gatt: cannot register the peer service again: \(error)")
          }
          try? await clock.sleep(for: .milliseconds(500))
        }
      }
      return nil
    }
  }

  /// Whether StartNotify failed because this client is subscribed already (bluetoothd 5.66:
  /// `InProgress`, "Already notifying").
  static func alreadyNotifying(_ error: DBusError) -> Bool {
    error.name.rawValue == "org.bluez.Error.InProgress"
      || "\(error)".localizedCaseInsensitiveContains("already notifying")
  }
}
