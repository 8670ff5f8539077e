extension MessageManager {
  /// Sends a report and follows the answer.
  func send(_ report: Report) async throws {
    let answer = try await resolver.report(report, from: credentials)
    await apply(answer, rescheduleRefresh: false)
  }

  /// Delivers the answer's events, then follows its directives unless a newer answer was
  /// already followed (answers to concurrent reports may arrive in any order).
  func apply(_ answer: ReportAnswer, rescheduleRefresh: Bool) async {
    deliver(answer.events)
    guard !isShutDown, answer.directives.revision > directives?.revision ?? 0 else { return }
    let tokenChanged = directives?.token != answer.directives.token
    directives = answer.directives
    if tokenChanged || rescheduleRefresh || refreshTask == nil {
      scheduleRefresh(after: answer.directives.refreshDelay)
    }
    await reconcileMediums()
  }

  /// Asks the resolver for directives again when the token is due to rotate.
  func scheduleRefresh(after delay: Duration) {
    refreshTask?.cancel()
    refreshGeneration &+= 1
    let generation = refreshGeneration
    let clock = configuration.clock
    refreshTask = Task { [weak self] in
      try? await clock.sleep(for: delay + .milliseconds(10))
      guard !Task.isCancelled, let self else { return }
      await self.refreshDirectives(generation)
    }
  }

  private func refreshDirectives(_ generation: UInt64) async {
    guard generation == refreshGeneration, !isShutDown else { return }
    // This task is now running the refresh: scheduling the next one must not cancel it.
    refreshTask = nil
    do {
      let answer = try await resolver.report(Report(), from: credentials)
      refreshBackoff.reset()
      await apply(answer, rescheduleRefresh: true)
    } catch let error as ResolverError where error.meansDeviceIsGone {
      await resolverDropped(because: "\(error)")
    } catch {
      // Doubling (1 s to a minute, with jitter): devices that lost the resolver together do
      // not all come back in the same second.
      let delay = refreshBackoff.next()
      logger.warning(
        "refreshing directives failed; retrying", metadata: ["error": "\(error)", "in": "\(delay)"])
      if !isShutDown { scheduleRefresh(after: delay) }
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
  /// repeats while it changed something, so directives that arrive during one of its awaits
  /// are applied too. A medium is marked as transmitting or scanning only once it succeeded;
  /// a failure is retried by the next reconcile (the next answer, or the medium's recovery).
  func reconcileMediums() async {
    guard !isReconciling else { return }
    isReconciling = true
    defer { isReconciling = false }
    var changed = true
    while changed, let directives {
      changed = false
      for index in slots.indices {
        guard !isShutDown else { return }
        let medium = slots[index].medium
        let wantToken =
          directives.broadcast.contains(medium.kind) && medium.capabilities.contains(.broadcast)
          ? directives.token : nil
        if slots[index].transmitting != wantToken {
          if let wantToken {
            do {
              try await medium.transmit(wantToken)
              slots[index].transmitting = wantToken
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
        let wantScan = directives.scan.contains(medium.kind) && medium.capabilities.contains(.scan)
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
