-- Issue 28, point 5: the responder's preference answers a match request at a time of its
-- own (15 s for the delayed ones), which the responder's screens count down to; and who
-- answered (the preference, or the responder by hand) is kept for both sides to be told.
alter table match_request add column auto_answer_at integer;
alter table match_request add column auto_accept integer check (auto_accept in (0, 1));
alter table match_request add column answered_automatically integer not null default 0
    check (answered_automatically in (0, 1));
