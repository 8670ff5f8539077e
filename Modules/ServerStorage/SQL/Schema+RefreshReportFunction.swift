extension Schema {
  /// `nearby_refresh_report(device, secret, now, margin, fresh_for, tokens, heard_at,
  /// mediums)`: applies a refresh report as `ResolutionEngine.report` would, or changes
  /// nothing and names why not (a `RefreshReport.Detour`). It locks the device's row (as the
  /// general path locks it first, so its sightings change only here) and checks that it
  /// still holds `secret`, the stored secret authentication accepted, and that its token is
  /// not due. A sighting (token, heard at, medium) counts when its token was bound then to
  /// another device of the project; every counted (device, medium) must refresh a sighting
  /// fresher than `fresh_for` seconds, and no binding may end within `margin` of a sighting's
  /// time. Then each counted sighting's time becomes `now` (its row alone is written: no other
  /// device is locked) and the device's last report time and revision are set. The function
  /// is `VOLATILE`: each statement in it sees what committed before it, including the work
  /// of a transaction its lock waited for. Its statements keep one generic plan each
  /// (`plan_cache_mode`, PostgreSQL 12 on): planned anew on every call they were a quarter of
  /// PostgreSQL's work for a report (docs/benchmarks.md).
  static let refreshReportFunction = """
    CREATE OR REPLACE FUNCTION nearby_refresh_report(
      p_device TEXT, p_secret TEXT, p_now DOUBLE PRECISION, p_margin DOUBLE PRECISION,
      p_fresh_for DOUBLE PRECISION, p_tokens BIGINT[], p_heard_at DOUBLE PRECISION[],
      p_mediums BIGINT[],
      OUT outcome TEXT, OUT new_revision BIGINT, OUT current_token BIGINT,
      OUT current_token_expires_at DOUBLE PRECISION, OUT current_usage TEXT)
    LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_generic_plan AS $refresh$
    DECLARE
      reporter devices%ROWTYPE;
      heard_devices TEXT[];
      heard_mediums BIGINT[];
      on_edge BOOLEAN;
      all_fresh BOOLEAN;
    BEGIN
      SELECT * INTO reporter FROM devices WHERE id = p_device FOR UPDATE;
      IF NOT FOUND OR reporter.secret <> p_secret THEN
        outcome := 'deviceChanged';
        RETURN;
      END IF;
      IF reporter.token_expires_at - p_now <= p_margin THEN
        outcome := 'tokenDue';
        RETURN;
      END IF;
      SELECT bool_or(abs(b.valid_until - b.heard_at) <= p_margin),
        array_agg(b.heard) FILTER (WHERE b.valid_until > b.heard_at),
        array_agg(b.medium) FILTER (WHERE b.valid_until > b.heard_at)
      INTO on_edge, heard_devices, heard_mediums
      FROM (
        SELECT t.device AS heard, t.valid_until, x.heard_at, x.medium
        FROM unnest(p_tokens, p_heard_at, p_mediums) AS x (token, heard_at, medium)
        JOIN tokens t ON t.token = x.token
        JOIN devices d ON d.id = t.device
        WHERE t.device <> p_device AND d.project = reporter.project
      ) b;
      IF on_edge THEN
        outcome := 'bindingEdge';
        RETURN;
      END IF;
      SELECT coalesce(bool_and(s.seen_at IS NOT NULL AND p_now - s.seen_at < p_fresh_for), TRUE)
      INTO all_fresh
      FROM unnest(heard_devices, heard_mediums) AS c (heard, medium)
      LEFT JOIN sightings s ON s.hearer = p_device AND s.heard = c.heard AND s.medium = c.medium;
      IF NOT all_fresh THEN
        outcome := 'startsNearness';
        RETURN;
      END IF;
      UPDATE sightings s SET seen_at = p_now
      FROM unnest(heard_devices, heard_mediums) AS c (heard, medium)
      WHERE s.hearer = p_device AND s.heard = c.heard AND s.medium = c.medium;
      UPDATE devices SET last_report_at = p_now, revision = devices.revision + 1
      WHERE id = p_device
      RETURNING 'refreshed', devices.revision, devices.token, devices.token_expires_at,
        devices.usage
      INTO outcome, new_revision, current_token, current_token_expires_at, current_usage;
    END
    $refresh$
    """
}
