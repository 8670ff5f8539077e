import AsyncAlgorithms
import Core
import DBus

extension BlueZEngine {
  /// What the engine's loop reads, one at a time.
  enum Input: Sendable {
    /// A signal of bluetoothd's that the reporter passed on (about adapters, or behind one).
    case signal(DBusMessage)
    /// bluetoothd's bus name changed owner (empty: it left the bus).
    case ownerChanged(String)
    /// A timer the loop slept on came due.
    case fired(Timer)
  }

  /// The engine's timers: each is slept on the engine's clock in the loop's group, and armed
  /// again for one period after what it started has been done.
  enum Timer: Sendable {
    /// Presence: the reporter's devices held present, and the monitor's restart for silent
    /// ones (BlueZEngine+Presence.swift). Every second.
    case presence
    /// The scan watchdog (BlueZEngine+ScanPlan.swift). Every third of
    /// ``BlueZConfiguration/scanWatchdog``.
    case watchdog

    func period(in configuration: BlueZConfiguration) -> Duration {
      switch self {
      case .presence: .seconds(1)
      case .watchdog: configuration.scanWatchdog / 3
      }
    }
  }

  /// Starts the engine's loop in its work group: it reads BlueZ's signals, the owner changes
  /// of its bus name and the timers' fires, in one sequence, and hands each to the engine
  /// before it reads the next; each timer sleeps in a task of the loop's group. The loop
  /// holds the engine weakly and ends when the engine shuts down (its work is cancelled) or is
  /// released.
  func startLoop(
    signals: AsyncStream<DBusMessage>, owners: AsyncStream<(old: String, new: String)>
  ) {
    // At most one fire per timer waits at a time: each is armed again only once handled.
    let (fires, fire) = AsyncStream.makeStream(of: Timer.self, bufferingPolicy: .unbounded)
    let (clock, configuration, reporter) = (clock, configuration, reporter)
    own { [weak self] in
      await withDiscardingTaskGroup { group in
        func arm(_ timer: Timer) {
          let deadline = clock.now + timer.period(in: configuration)
          group.addTask {
            guard (try? await clock.sleep(until: deadline)) != nil else { return }
            fire.yield(timer)
          }
        }
        arm(.presence)
        arm(.watchdog)
        let inputs = merge(
          signals.map(Input.signal), owners.map { Input.ownerChanged($0.new) },
          fires.map(Input.fired))
        for await input in inputs {
          guard let self else { break }
          switch input {
          case .signal(let signal):
            await self.handle(signal)
            reporter.engineHandled()
          case .ownerChanged(let owner):
            await self.ownerChanged(to: owner)
          case .fired(let timer):
            switch timer {
            case .presence: await self.presenceTick()
            case .watchdog: await self.checkWatchdog()
            }
            arm(timer)
          }
        }
        fire.finish()
        group.cancelAll()
      }
    }
  }
}
