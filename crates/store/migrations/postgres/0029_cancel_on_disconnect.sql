-- Cancel on disconnect (issue 29, ADR 0043). A node holds a lease row for each user with
-- a realtime session on it, and for each company whose FIX session it holds, renewed
-- while the session lives; one whose rows have all lapsed (closed, or the node died) is
-- gone. A trader chooses whether their working orders are then pulled; each pulled order
-- tells its owner, on the order. A company's FIX session does the same for the parent
-- orders it sent, unless the company turns it off.
create table presence (
    -- A user's realtime sessions (USER, the user's id), or a company's FIX session (FIX,
    -- the company's id).
    holder_kind text not null check (holder_kind in ('USER', 'FIX')),
    holder_id uuid not null,
    node_id text not null,
    until timestamptz not null,
    primary key (holder_kind, holder_id, node_id)
);
create index presence_until on presence (until);
alter table app_user add column cancel_on_disconnect boolean not null default false;
alter table company add column fix_cancel_on_disconnect boolean not null default true;
alter table notification drop constraint notification_type_check;
alter table notification add constraint notification_type_check check (type in ('MATCH_REQUEST_ACCEPTED',
    'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED', 'MATCH_REQUEST_REJECTED', 'MATCH_REQUEST_TIMED_OUT',
    'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE', 'RFQ_RECEIVED', 'RFQ_QUOTE_RECEIVED', 'RFQ_QUOTE_ACCEPTED',
    'MATCH_REQUEST_BROKER_REJECTED', 'ORDER_PRICE_CORRECTED', 'ORDER_CANCELLED_ON_DISCONNECT'));
-- A notice on an order carries prices only when it is a correction.
alter table notification drop constraint notification_correction;
alter table notification add constraint notification_correction
    check ((old_price is null) = (new_price is null) and (old_price is null or order_id is not null)
        and (type = 'ORDER_PRICE_CORRECTED') = (old_price is not null));
