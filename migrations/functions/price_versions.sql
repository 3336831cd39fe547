-- An event's price configuration version (migrations/00032_price_versions.sql): raised
-- by a trigger on every table priceConfig reads, so no change can forget it, and in the
-- changing transaction, so the change and its version are seen together.

-- price_version_bump raises event p_event_id's version: to now in microseconds, or one
-- more than it was if that is later.
CREATE OR REPLACE FUNCTION price_version_bump(p_event_id bigint) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO event_price_versions AS v (event_id, version)
    VALUES (p_event_id, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint)
    ON CONFLICT (event_id) DO UPDATE
    SET version = greatest(v.version + 1, EXCLUDED.version)
$$;

-- price_version_changed: a row of the event's price configuration was written or
-- removed (both events' versions, should a row move to another event).
CREATE OR REPLACE FUNCTION price_version_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM price_version_bump(OLD.event_id);
    END IF;
    IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.event_id <> OLD.event_id) THEN
        PERFORM price_version_bump(NEW.event_id);
    END IF;
    RETURN NULL;
END;
$$;

-- price_version_open: a new event starts with a version of its own.
CREATE OR REPLACE FUNCTION price_version_open() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM price_version_bump(NEW.id);
    RETURN NULL;
END;
$$;

CREATE OR REPLACE TRIGGER events_price_version AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION price_version_open();
CREATE OR REPLACE TRIGGER event_pricing_price_version AFTER INSERT OR UPDATE OR DELETE ON event_pricing
    FOR EACH ROW EXECUTE FUNCTION price_version_changed();
CREATE OR REPLACE TRIGGER event_fees_price_version AFTER INSERT OR UPDATE OR DELETE ON event_fees
    FOR EACH ROW EXECUTE FUNCTION price_version_changed();
CREATE OR REPLACE TRIGGER ticket_types_price_version AFTER INSERT OR UPDATE OR DELETE ON ticket_types
    FOR EACH ROW EXECUTE FUNCTION price_version_changed();
CREATE OR REPLACE TRIGGER ticket_type_prices_price_version AFTER INSERT OR UPDATE OR DELETE ON ticket_type_prices
    FOR EACH ROW EXECUTE FUNCTION price_version_changed();
