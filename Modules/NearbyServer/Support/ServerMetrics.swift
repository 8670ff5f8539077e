import Metrics
import Prometheus

/// The server's metrics: swift-metrics types backed by a Prometheus registry of the server's
/// own (not the process-wide metrics system, so several servers can live in one process),
/// exposed at `/metrics`.
struct ServerMetrics: Sendable {
  let registry: PrometheusCollectorRegistry
  let requests: Metrics.Counter
  let reports: Metrics.Counter
  let sightings: Metrics.Counter
  let devicesRegistered: Metrics.Counter
  let eventStreams: Metrics.Counter
  let eventsStreamed: Metrics.Counter
  let sweeps: Metrics.Counter
  let sweepEvents: Metrics.Counter
  let databaseErrors: Metrics.Counter
  let requestDuration: Metrics.Timer

  init() {
    let registry = PrometheusCollectorRegistry()
    let factory = PrometheusMetricsFactory(registry: registry)
    self.registry = registry
    requests = Metrics.Counter(label: "nearby_http_requests_total", factory: factory)
    reports = Metrics.Counter(label: "nearby_reports_total", factory: factory)
    sightings = Metrics.Counter(label: "nearby_sightings_total", factory: factory)
    devicesRegistered = Metrics.Counter(label: "nearby_devices_registered_total", factory: factory)
    eventStreams = Metrics.Counter(label: "nearby_event_streams_opened_total", factory: factory)
    eventsStreamed = Metrics.Counter(label: "nearby_events_streamed_total", factory: factory)
    sweeps = Metrics.Counter(label: "nearby_sweeps_total", factory: factory)
    sweepEvents = Metrics.Counter(label: "nearby_sweep_events_total", factory: factory)
    databaseErrors = Metrics.Counter(label: "nearby_database_errors_total", factory: factory)
    requestDuration = Metrics.Timer(label: "nearby_http_request_duration_seconds", factory: factory)
  }

  /// The Prometheus text exposition.
  func exposition() -> [UInt8] { registry.emitToBuffer() }
}
