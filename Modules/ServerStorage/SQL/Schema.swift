import Foundation

/// The server's tables, created and upgraded by numbered migrations that run when the storage
/// opens (``Schema/migrate(_:)``). Times are seconds since 1970 (`REAL` / `DOUBLE
/// PRECISION`); identifiers are their UUID text; tokens and unsigned counters are 64-bit
/// integers with the unsigned bits.
enum Schema {
  /// The newest schema version this program knows.
  static var version: Int { migrations.count }

  /// Brings the database to ``version``, each migration in its own step. Runs inside the
  /// caller's transaction (the PostgreSQL storage holds its lock, so two instances starting
  /// together migrate once).
  /// - Throws: ``SQLStorageError/schemaTooNew(found:known:)`` for a database written by a newer
  ///   program; the driver's errors.
  static func migrate(_ sql: some SQLConnection) throws {
    try sql.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)")
    let found =
      try sql.queryFirst("SELECT MAX(version) FROM schema_migrations", [])
      .flatMap { try $0.optionalInteger(0) }.map(Int.init) ?? 0
    guard found <= version else { throw SQLStorageError.schemaTooNew(found: found, known: version) }
    for (index, statements) in migrations.enumerated() where index + 1 > found {
      for statement in statements {
        guard let text = statement.for(sql.dialect) else { continue }
        try sql.execute(text)
      }
      try sql.execute(
        "INSERT INTO schema_migrations (version) VALUES (?)", [.integer(Int64(index + 1))])
    }
  }

  /// Each migration: statements with `{blob}`, `{real}`, `{int}` and `{serial}` standing for
  /// the dialect's type names, and `{references messages}` for a foreign key to `messages`
  /// (PostgreSQL only); a statement made with ``Statement/postgres(_:)`` runs on PostgreSQL
  /// only.
  static let migrations: [[Statement]] = [
    [
      """
      CREATE TABLE devices (
        id TEXT PRIMARY KEY,
        project TEXT NOT NULL,
        secret TEXT NOT NULL,
        token {int} NOT NULL,
        token_expires_at {real} NOT NULL,
        usage TEXT NOT NULL,
        revision {int} NOT NULL,
        last_event_sequence {int} NOT NULL
      )
      """,
      """
      CREATE TABLE tokens (
        token {int} PRIMARY KEY,
        device TEXT NOT NULL,
        valid_until {real} NOT NULL
      )
      """,
      """
      CREATE TABLE publications (
        id TEXT PRIMARY KEY,
        device TEXT NOT NULL,
        project TEXT NOT NULL,
        namespace TEXT NOT NULL,
        type TEXT NOT NULL,
        content {blob} NOT NULL,
        digest {blob} NOT NULL,
        strategy TEXT NOT NULL,
        expires_at {real}
      )
      """,
      "CREATE INDEX publications_by_device ON publications (device, namespace, type)",
      """
      CREATE TABLE subscriptions (
        id TEXT PRIMARY KEY,
        device TEXT NOT NULL,
        project TEXT NOT NULL,
        namespace TEXT NOT NULL,
        type TEXT,
        strategy TEXT NOT NULL,
        device_types {int} NOT NULL,
        expires_at {real}
      )
      """,
      "CREATE INDEX subscriptions_by_device ON subscriptions (device, namespace)",
      """
      CREATE TABLE sightings (
        hearer TEXT NOT NULL,
        heard TEXT NOT NULL,
        medium {int} NOT NULL,
        seen_at {real} NOT NULL,
        PRIMARY KEY (hearer, heard, medium)
      )
      """,
      "CREATE INDEX sightings_by_heard ON sightings (heard)",
      """
      CREATE TABLE deliveries (
        subscription TEXT NOT NULL,
        publication TEXT NOT NULL,
        digest {blob} NOT NULL,
        PRIMARY KEY (subscription, publication)
      )
      """,
      "CREATE INDEX deliveries_by_publication ON deliveries (publication)",
      "CREATE INDEX deliveries_by_message ON deliveries (subscription, digest)",
      """
      CREATE TABLE deadlines (
        id {serial},
        due_at {real} NOT NULL,
        kind TEXT NOT NULL,
        subject TEXT NOT NULL
      )
      """,
      "CREATE INDEX deadlines_by_time ON deadlines (due_at)",
      """
      CREATE TABLE events (
        device TEXT NOT NULL,
        sequence {int} NOT NULL,
        created_at {real} NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (device, sequence)
      )
      """,
      "CREATE INDEX events_by_time ON events (created_at)",
      """
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        project TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        label TEXT NOT NULL,
        created_at {real} NOT NULL,
        revoked_at {real}
      )
      """,
    ],
    [
      """
      CREATE TABLE beacons (
        project TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        advertised_id {blob} NOT NULL,
        description TEXT NOT NULL,
        created_at {real} NOT NULL,
        PRIMARY KEY (project, name)
      )
      """,
      """
      CREATE TABLE attachments (
        project TEXT NOT NULL,
        beacon TEXT NOT NULL,
        name TEXT NOT NULL,
        namespace TEXT NOT NULL,
        type TEXT NOT NULL,
        data {blob} NOT NULL,
        created_at {real} NOT NULL,
        PRIMARY KEY (project, beacon, name)
      )
      """,
    ],
    [
      // Eddystone-EID beacons: the identity key (secret), rotation exponent, the beacon's
      // clock at registration and when that was.
      """
      CREATE TABLE beacon_eids (
        project TEXT NOT NULL,
        beacon TEXT NOT NULL,
        identity_key {blob} NOT NULL,
        rotation_exponent {int} NOT NULL,
        clock_value {int} NOT NULL,
        registered_at {real} NOT NULL,
        PRIMARY KEY (project, beacon)
      )
      """
    ],
    [
      // A message body is stored once, by its digest (namespace, type, content), and found
      // and lost events refer to it instead of each holding a copy. On PostgreSQL the
      // reference is a foreign key: an event being appended holds its message (`FOR KEY
      // SHARE`), so a concurrent prune cannot delete it from under the event.
      """
      CREATE TABLE messages (
        digest {blob} PRIMARY KEY,
        namespace TEXT NOT NULL,
        type TEXT NOT NULL,
        content {blob} NOT NULL
      )
      """,
      "ALTER TABLE events ADD COLUMN message {blob}{references messages}",
      "CREATE INDEX events_by_message ON events (message) WHERE message IS NOT NULL",
    ],
    [
      // Key roles: a key an app carries is a client key; keys made before roles existed did
      // everything, and stay admin keys.
      "ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'admin'",
      // When a device last reported (a silent device expires): for a device from before,
      // when its token runs out stands in. The devices it came near this minute (a relay
      // claiming many at once is cut off).
      "ALTER TABLE devices ADD COLUMN last_report_at {real} NOT NULL DEFAULT 0",
      "UPDATE devices SET last_report_at = token_expires_at",
      "CREATE INDEX devices_by_last_report ON devices (last_report_at)",
      "CREATE INDEX devices_by_project ON devices (project)",
      "ALTER TABLE devices ADD COLUMN new_neighbors_since {real}",
      "ALTER TABLE devices ADD COLUMN new_neighbors {int} NOT NULL DEFAULT 0",
      // The server instances sharing the database, each with when it last said so: rate
      // limits are divided among them.
      """
      CREATE TABLE server_instances (
        id TEXT PRIMARY KEY,
        seen_at {real} NOT NULL
      )
      """,
    ],
    [
      // Namespaces and who owns them: the first project to attach data in a namespace owns
      // it; `public` ones are readable by any project that names them, `unlisted` ones by
      // their owner only. Names are unique across projects (ownership is global).
      """
      CREATE TABLE namespaces (
        project TEXT NOT NULL,
        name TEXT NOT NULL UNIQUE,
        visibility TEXT NOT NULL DEFAULT 'unlisted',
        created_at {real} NOT NULL,
        PRIMARY KEY (project, name)
      )
      """,
      // The namespaces in use before: each goes to the project of its oldest attachment (the
      // smallest project name on a tie); the others keep what they attached but add no more.
      """
      INSERT INTO namespaces (project, name, visibility, created_at)
      SELECT MIN(a.project), a.namespace, 'unlisted', a.created_at FROM attachments a
      WHERE a.created_at = (SELECT MIN(b.created_at) FROM attachments b WHERE b.namespace = a.namespace)
      GROUP BY a.namespace, a.created_at
      """,
      // The beacon lifecycle (active, inactive, decommissioned: a tombstone whose id is never
      // registered again) and what operators record about a beacon.
      "ALTER TABLE beacons ADD COLUMN status TEXT NOT NULL DEFAULT 'active'",
      "ALTER TABLE beacons ADD COLUMN place TEXT NOT NULL DEFAULT ''",
      "ALTER TABLE beacons ADD COLUMN latitude {real}",
      "ALTER TABLE beacons ADD COLUMN longitude {real}",
      "ALTER TABLE beacons ADD COLUMN indoor_level TEXT NOT NULL DEFAULT ''",
      "ALTER TABLE beacons ADD COLUMN expected_stability TEXT",
      "CREATE INDEX beacons_by_time ON beacons (project, created_at, name)",
      // An attachment delivered only while its beacon is this close.
      "ALTER TABLE attachments ADD COLUMN max_distance_meters {real}",
      // The server's Curve25519 key pair for Eddystone-EID key exchange (secret, as identity
      // keys are).
      """
      CREATE TABLE eid_service_keys (
        id TEXT PRIMARY KEY,
        private_key {blob} NOT NULL,
        public_key {blob} NOT NULL,
        created_at {real} NOT NULL
      )
      """,
      """
      CREATE TABLE beacon_properties (
        project TEXT NOT NULL,
        beacon TEXT NOT NULL,
        property TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (project, beacon, property)
      )
      """,
    ],
    [
      // Beacon diagnostics: when each beacon was last observed by a client of its project, the
      // latest telemetry forwarded for it (plain Eddystone-TLM read into columns, encrypted
      // kept as bytes), and the battery trend fitted over hourly samples.
      """
      CREATE TABLE beacon_diagnostics (
        project TEXT NOT NULL,
        beacon TEXT NOT NULL,
        last_observed_at {real} NOT NULL,
        telemetry_at {real},
        battery_mv {int},
        temperature {real},
        advertising_count {int},
        uptime_seconds {real},
        encrypted_telemetry {blob},
        trend_mv_per_second {real},
        trend_fit_mv {real},
        trend_at {real},
        PRIMARY KEY (project, beacon)
      )
      """,
      """
      CREATE TABLE beacon_battery_samples (
        project TEXT NOT NULL,
        beacon TEXT NOT NULL,
        hour {int} NOT NULL,
        millivolts {int} NOT NULL,
        PRIMARY KEY (project, beacon, hour)
      )
      """,
      // What matches taught of each EID beacon's clock: the seconds to add to its registered
      // clock, and when it was last matched (its search window widens with the time since).
      "ALTER TABLE beacon_eids ADD COLUMN clock_offset {int} NOT NULL DEFAULT 0",
      "ALTER TABLE beacon_eids ADD COLUMN last_matched_at {real}",
    ],
    [
      // Publication and subscription ids scoped to their device: devices registered from this
      // version on keep theirs under a mask of their own; those registered before keep the ids
      // they sent.
      "ALTER TABLE devices ADD COLUMN scoped_handles {int} NOT NULL DEFAULT 0",
      // One Eddystone-EID service key pair per project (the shared one of `eid_service_keys`
      // let any project derive the identity keys of another's beacons).
      """
      CREATE TABLE eid_project_keys (
        project TEXT PRIMARY KEY,
        private_key {blob} NOT NULL,
        public_key {blob} NOT NULL,
        created_at {real} NOT NULL
      )
      """,
      // Console sessions, so that signing out (or revoking the key) ends one on every
      // instance, and an idle one ends: the cookie names the row by a random id.
      """
      CREATE TABLE console_sessions (
        project TEXT NOT NULL,
        id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        created_at {real} NOT NULL,
        last_seen_at {real} NOT NULL,
        expires_at {real} NOT NULL,
        PRIMARY KEY (project, id)
      )
      """,
      "CREATE INDEX console_sessions_by_key ON console_sessions (key_id)",
    ],
    [
      // A report that only refreshes sightings still fresh (the common report) in one
      // statement on PostgreSQL; see RefreshReport.
      .postgres(refreshReportFunction)
    ],
  ]
}
