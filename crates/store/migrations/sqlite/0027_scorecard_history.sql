-- What the scorecards (issue 29) measure against, kept from now on: the band of each
-- instrument as it moved (outside the action log), when a match request was answered
-- (left PENDING), and when a provider first quoted on an RFQ.
create table band_history (
    instrument_id blob not null references instrument (instrument_id),
    at integer not null,
    min_tick_price text not null,
    max_tick_price text not null,
    primary key (instrument_id, at)
);
insert into band_history (instrument_id, at, min_tick_price, max_tick_price)
select instrument_id, updated_at, min_tick_price, max_tick_price from instrument;
alter table match_request add column answered_at integer;
-- The requests that ended without a broker step ended when they were last written.
update match_request set answered_at = updated_at
where state in ('REJECTED', 'TIMED_OUT', 'CANCELLED', 'SYSTEM_CANCELLED_PRICE_OUT_OF_TICK');
alter table rfq_response add column quoted_at integer;
-- A scorecard reads a period's requests, RFQs and brokers' links.
create index match_request_created on match_request (created_at);
create index rfq_created on rfq (created_at);
create index broker_confirmation_created on broker_confirmation (created_at);
