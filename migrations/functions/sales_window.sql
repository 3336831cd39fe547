-- The sales window. A sale is open from onsale_at (inclusive) to sales_close_at
-- (exclusive), or to starts_at when sales_close_at is NULL, and only while the event is
-- published. Only the database clock decides: every statement that starts a sale
-- (hold_seats, HoldCreate, OrderCreate, PaymentClaim) carries event_on_sale in its own
-- condition, so the window and the claim see one instant. The payment webhook's
-- confirm does not: the money is taken, and selling what was held in time is right.
--
-- SQL functions of one expression, inlined into the statements that call them, as in
-- hold_live.sql.

-- event_sales_close: when the event's sale closes.
CREATE OR REPLACE FUNCTION event_sales_close(e events) RETURNS timestamptz
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(e.sales_close_at, e.starts_at)
$$;

-- event_on_sale: the event's sale is open now.
CREATE OR REPLACE FUNCTION event_on_sale(e events) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT e.published AND now() >= e.onsale_at AND now() < event_sales_close(e)
$$;

-- event_sale_state: where the sale stands now: 'on_sale'; 'not_on_sale' before it
-- opens; 'closed' after it closes, or while the event is not published.
CREATE OR REPLACE FUNCTION event_sale_state(e events) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN event_on_sale(e) THEN 'on_sale'
                WHEN e.published AND now() < e.onsale_at THEN 'not_on_sale'
                ELSE 'closed' END
$$;

-- event_on_sale_with: the sale is open now to a hold that records access code
-- p_code_id (NULL: none): the public sale, or before it the code's presale
-- (presale.sql). OrderCreate and PaymentClaim carry it, as they carry event_on_sale.
CREATE OR REPLACE FUNCTION event_on_sale_with(e events, p_code_id bigint) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT event_on_sale(e)
        OR (p_code_id IS NOT NULL AND e.published AND now() < e.onsale_at
            AND EXISTS (SELECT 1 FROM access_codes c
                        WHERE c.event_id = e.id AND c.id = p_code_id AND access_code_open(c)))
$$;
