import AsyncAlgorithms
import Core

extension PeerResolver {
  /// What the loop reads, one at a time.
  enum Input: Sendable {
    /// A datagram from the transport at this index of ``transports``.
    case datagram(PeerDatagram, transport: Int)
    /// Part of a datagram from this address arrived (``PeerTransport/arriving``).
    case arriving(PeerAddress)
    /// ``PeerResolverConfiguration/tickInterval`` passed on the resolver's clock.
    case tick
    /// The sender handed a datagram to its transport (true), or the transport refused it.
    case sent(Bool)
  }

  /// Where the resolver is in its life.
  enum Lifecycle {
    /// No device registered yet: nothing runs.
    case idle
    /// The loop runs in this task.
    case running(Task<Void, Never>)
    /// ``shutdown()`` was called: the loop drains and ends in this task, which every caller
    /// of ``shutdown()`` awaits.
    case shutDown(Task<Void, Never>)
  }

  /// Starts the loop if nothing runs yet.
  func startIfIdle() {
    guard case .idle = lifecycle else { return }
    lifecycle = .running(startLoop())
  }

  /// Sends what is still queued, then ends the loop (awaiting it), which shuts the transports
  /// down and finishes every event stream. Registering afterwards fails. A second call (even
  /// a concurrent one) returns once the first has finished.
  public func shutdown() async {
    let loop: Task<Void, Never>
    switch lifecycle {
    case .idle:
      // Even with nothing running, the transports are closed the one way: by the sender.
      loop = startLoop()
    case .running(let task):
      loop = task
    case .shutDown(let task):
      await task.value
      return
    }
    lifecycle = .shutDown(loop)
    // The sender drains the outbox, closes the transports, then ends the inputs: the loop
    // counts every send result of the drain before it ends.
    outboxContinuation.finish()
    await loop.value
  }

  /// The one task the resolver starts. It hosts the sender, which drains the outbox, closes
  /// the transports and then ends the inputs, the feeders (two readers per transport: its
  /// datagrams and its parts arriving), which hand what they read to the one loop that
  /// decides, and the loop's tick timer. The task holds the resolver weakly: a resolver
  /// released without a shutdown finishes both streams in its `deinit`, which ends the task
  /// the same way.
  private func startLoop() -> Task<Void, Never> {
    let (transports, outbox, inputs) = (self.transports, self.outbox, self.inputs)
    let (clock, interval) = (self.clock, configuration.tickInterval)
    return Task { [weak self] in
      await withDiscardingTaskGroup { group in
        group.addTask {
          for await outgoing in outbox {
            await inputs.send(.sent(await Self.send(outgoing, over: transports)))
          }
          for transport in transports { await transport.shutdown() }
          inputs.finish()
        }
        await withDiscardingTaskGroup { feeders in
          for (index, transport) in transports.enumerated() {
            feeders.addTask {
              for await datagram in transport.incoming {
                await inputs.send(.datagram(datagram, transport: index))
              }
            }
            feeders.addTask {
              for await sender in transport.arriving { await inputs.send(.arriving(sender)) }
            }
          }
          // The tick is a timer of the loop: it sleeps on the resolver's clock, and the loop
          // arms it again once it handled the fire, so the next interval starts after the
          // tick's work, and a test's hand-moved clock sees the sleeper again only then.
          func armTick() {
            feeders.addTask {
              guard (try? await clock.sleep(for: interval)) != nil else { return }
              await inputs.send(.tick)
            }
          }
          armTick()
          for await input in inputs {
            guard let self else { break }
            await self.handle(input)
            if case .tick = input { armTick() }
          }
          feeders.cancelAll()
        }
      }
      await self?.finishStreams()
    }
  }

  private func handle(_ input: Input) {
    switch input {
    case .datagram(let datagram, let transport): receive(datagram, on: transport)
    case .arriving(let sender): exchange.partArrived(from: sender, now: now())
    case .tick: tick()
    case .sent(true): statistics.sent += 1
    case .sent(false): statistics.sendFailures += 1
    }
  }

  private func finishStreams() {
    for continuation in streams.values { continuation.finish() }
    streams = [:]
    for continuation in paceStreams.values { continuation.finish() }
    paceStreams = [:]
  }

  private static func send(_ outgoing: Outgoing, over transports: [any PeerTransport]) async
    -> Bool
  {
    do {
      if let address = outgoing.address {
        guard let transport = transports.first(where: { $0.kind == address.transport }) else {
          return false
        }
        try await transport.send(outgoing.bytes, to: address)
      } else {
        var sentOnce = false
        for transport in transports where transport.capabilities.contains(.multicast) {
          try await transport.sendToAll(outgoing.bytes)
          sentOnce = true
        }
        return sentOnce
      }
      return true
    } catch {
      return false
    }
  }

  /// How far the resolver is through the work it was given: what a test that runs several
  /// resolvers on one network compares with what the network delivered, to know when
  /// nothing is left to happen (then it asserts, instead of polling for an outcome).
  public func progress() -> PeerProgress {
    PeerProgress(
      datagramsHandled: statistics.received,
      sendsPending: queued - statistics.sent - statistics.sendFailures
        - statistics.outboxOverflows,
      eventsStreamed: eventsStreamed)
  }
}
