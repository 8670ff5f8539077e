extension MessageManager {
  /// Sends a report and follows the answer.
  func send(_ report: Report) async throws {
    let answer = try await resolver.report(report, from: credentials)
    await apply(answer, isRefresh: false)
  }

  /// Delivers the answer's events, then follows its directives as the
  /// ``DirectivesStateMachine`` decides (only the newest; see there for the refresh rules).
  func apply(_ answer: ReportAnswer, isRefresh: Bool) async {
    deliver(answer.events)
    guard !isShutDown else { return }
    await perform(directivesMachine.answered(answer.directives, isRefresh: isRefresh))
  }

  /// Performs what the directives machine decided.
  private func perform(_ actions: [DirectivesStateMachine.Action]) async {
    for action in actions {
      switch action {
      case .scheduleRefresh(let delay, let generation):
        scheduleRefresh(after: delay, generation: generation)
      case .reconcileMediums:
        await reconcileMediums()
      }
    }
  }

  /// Arms the refresh timer on the manager's clock (in its loop). A timer it replaces still
  /// fires, and the directives machine, which armed a newer generation, turns it down.
  private func scheduleRefresh(after delay: Duration, generation: UInt64) {
    schedule(.refresh(generation: generation), at: clock.now + delay)
  }

  /// The refresh timer of `generation` fired.
  func refreshDirectives(_ generation: UInt64) async {
    guard !isShutDown, directivesMachine.refreshDue(generation) else { return }
    do {
      let answer = try await resolver.report(Report(), from: credentials)
      await apply(answer, isRefresh: true)
    } catch let error as ResolverError where error.meansDeviceIsGone {
      await resolverDropped(because: "\(error)")
    } catch {
      guard !isShutDown else { return }
      let retry = directivesMachine.refreshFailed()
      if case .scheduleRefresh(let delay, _) = retry {
        logger.warning(
          "refreshing directives failed; retrying",
          metadata: ["error": "\(error)", "in": "\(delay)"])
      }
      await perform([retry])
    }
  }

  /// Asks for directives now (after an expiry changed which handles exist).
  func requestDirectives() async {
    guard !isShutDown else { return }
    do {
      try await send(Report())
    } catch {
      logger.warning("asking for directives failed", metadata: ["error": "\(error)"])
    }
  }

  /// Brings every medium in line with the current directives. One pass runs at a time; a pass
  /// repeats while it changed something or was asked for again, so directives that arrive
  /// during one of its awaits are applied too. A medium is marked as transmitting or scanning
  /// only once it succeeded; a failure is retried by the next reconcile (the next answer, or
  /// the medium's recovery).
  func reconcileMediums() async {
    guard mediumsPass.begin() else { return }
    defer { mediumsPass.end() }
    var changed = true
    while changed || mediumsPass.takeRequest(), directivesMachine.directives != nil {
      changed = false
      for index in slots.indices {
        guard !isShutDown else { return }
        let medium = slots[index].medium
        let want = directivesMachine.want(kind: medium.kind, capabilities: medium.capabilities)
        let wanted = want.transmission
        if slots[index].transmitting != wanted {
          if let wanted {
            do {
              try await medium.transmit(wanted.token, digest: wanted.digest)
              slots[index].transmitting = wanted
              changed = true
            } catch {
              logger.warning(
                "medium cannot transmit",
                metadata: ["medium": "\(medium.name)", "error": "\(error)"])
            }
          } else {
            await medium.stopTransmitting()
            slots[index].transmitting = nil
            changed = true
          }
        }
        let wantScan = want.scan
        if slots[index].scanning != wantScan, !isShutDown {
          if wantScan {
            do {
              try await medium.startScanning()
              slots[index].scanning = true
              changed = true
            } catch {
              logger.warning(
                "medium cannot scan", metadata: ["medium": "\(medium.name)", "error": "\(error)"])
            }
          } else {
            await medium.stopScanning()
            slots[index].scanning = false
            changed = true
          }
        }
      }
    }
  }
}
