-- One notification per event for each party of a match request (spec section 3).
create table notification (
    notification_id blob primary key,
    user_id blob not null references app_user (user_id),
    type text not null check (type in ('MATCH_REQUEST_ACCEPTED', 'MATCH_REQUEST_CANCELLED', 'MATCH_REQUEST_RECEIVED',
        'MATCH_REQUEST_REJECTED', 'MATCH_REQUEST_TIMED_OUT', 'MATCH_REQUEST_SYSTEM_CANCELLED_OUT_OF_TICK_PRICE')),
    -- The state of its match request when the notification last changed.
    status text not null,
    instrument_id blob not null references instrument (instrument_id),
    match_request_id blob not null references match_request (match_request_id),
    -- The recipient's role in the match request (REQUESTER or RESPONDER).
    role text not null check (role in ('REQUESTER', 'RESPONDER')),
    read integer not null check (read in (0, 1)),
    archived integer not null check (archived in (0, 1)),
    created_at integer not null,
    expired_at integer not null,
    updated_at integer not null
);
create index notification_user on notification (user_id, archived, created_at);
create index notification_match_request on notification (match_request_id);
