-- The order path's remaining per-row costs on PostgreSQL (issue 9, ADR 0019). Measured
-- with pgbench on the order write itself (16 clients, the same statement the server
-- sends): 0.28 of the single-row insert ceiling before, 0.33 after.
--
-- 1. No foreign keys from a child order to its creator and its broker, nor from an
--    audit row to its user. Each took a KEY SHARE lock on the trader's and the broker's
--    row for every order, and every concurrent order of the firm (and every firm using
--    that broker) locked the same rows, so each lock built a new multixact out of the
--    previous one's members. Both values are the engine's own: the creator is the
--    acting user, the broker one of the company's brokers (checked against its cached
--    list), and users and companies are never deleted (they are deactivated). The key
--    to the parent's identity (company, instrument, side) stays.
alter table child_order drop constraint child_order_created_by_fkey;
alter table child_order drop constraint child_order_broker_id_fkey;
alter table action_log drop constraint action_log_user_id_fkey;

-- 2. No order or parent state names, nor sides, typed in CHECK constraints: the domain
--    owns them (issue 9: no order-state name typed in SQL), every write binds them from
--    its enums and every read parses them back through the domain, and PostgreSQL
--    rebuilt these expressions from their stored text on every statement that wrote a
--    row (the 13-state list the largest). The counters' checks stay: they are what
--    refuses an over-allocation whatever the isolation level.
alter table child_order drop constraint child_order_state_check;
alter table child_order drop constraint child_order_direction_check;
alter table parent_order drop constraint parent_order_state_check;
alter table parent_order drop constraint parent_order_direction_check;
alter table book_level drop constraint book_level_direction_check;
