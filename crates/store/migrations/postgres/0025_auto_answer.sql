-- Issue 28, point 5: the responder's preference answers a match request at a time of its
-- own (15 s for the delayed ones), which the responder's screens count down to; and who
-- answered (the preference, or the responder by hand) is kept for both sides to be told.
alter table match_request add column auto_answer_at timestamptz;
alter table match_request add column auto_accept boolean;
alter table match_request add column answered_automatically boolean not null default false;
alter table match_request add constraint match_request_auto_answer check ((auto_answer_at is null) = (auto_accept is null));
