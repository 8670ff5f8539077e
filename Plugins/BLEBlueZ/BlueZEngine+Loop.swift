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
    /// A timer came due, or the work it started ended.
    case timer(TimerEvent)
  }

  /// The engine's timers, each slept on the engine's clock in the loop's group.
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

  /// A timer's life in the loop.
  enum TimerEvent: Sendable {
    /// Its deadline came: its work starts.
    case fired(Timer)
    /// Its work ended: it sleeps one period again.
    case done(Timer)
  }

  /// Starts the engine's loop in its work group: it reads BlueZ's signals, the owner changes
  /// of its bus name and its timers' events, in one sequence.
  ///
  /// Signals and owner changes are handled in the loop, in order, each before the next. A
  /// timer's work (a monitor restart, the watchdog's scan restart: several D-Bus calls) runs as
  /// a task of the loop's group, so that the signals it makes bluetoothd send (and the device
  /// reports waiting behind them) are handled while it waits; each timer is armed again, for
  /// one period, once its work ended, so one run per timer is under way at a time. The loop
  /// holds the engine weakly and ends when the engine shuts down (its work is cancelled) or
  /// is released.
  func startLoop(
    signals: AsyncStream<DBusMessage>, owners: AsyncStream<(old: String, new: String)>
  ) {
    // At most two events per timer wait at a time: its fire, or the end of its work.
    let (timers, timer) = AsyncStream.makeStream(of: TimerEvent.self, bufferingPolicy: .unbounded)
    let (clock, configuration, reporter) = (clock, configuration, reporter)
    own { [weak self] in
      await withDiscardingTaskGroup { group in
        func arm(_ armed: Timer) {
          let deadline = clock.now + armed.period(in: configuration)
          group.addTask {
            guard (try? await clock.sleep(until: deadline)) != nil else { return }
            timer.yield(.fired(armed))
          }
        }
        arm(.presence)
        arm(.watchdog)
        let inputs = merge(
          signals.map(Input.signal), owners.map { Input.ownerChanged($0.new) },
          timers.map(Input.timer))
        for await input in inputs {
          guard let self else { break }
          switch input {
          case .signal(let signal):
            await self.handle(signal)
            reporter.engineHandled()
          case .ownerChanged(let owner):
            await self.ownerChanged(to: owner)
          case .timer(.fired(let fired)):
            group.addTask { [weak self] in
              switch fired {
              case .presence: await self?.presenceTick()
              case .watchdog: await self?.checkWatchdog()
              }
              timer.yield(.done(fired))
            }
          case .timer(.done(let done)):
            arm(done)
          }
        }
        timer.finish()
        // Ended (the engine shut down or was released): the sleeping timers go too.
        group.cancelAll()
      }
    }
  }
}
