-- Bounded quantities (ADR 0027): no quantity above 10^12 lots (the domain's
-- QUANTITY_CEILING), no counter above its order's quantity, no multiplier above 10^9.
-- SQLite turns an integer sum that leaves 64 bits into a REAL, which every CHECK then
-- compares as a float; so each row that a trigger's sum writes must still be an integer.
-- SQLite cannot add a CHECK to a table, so these are triggers that abort the statement
-- (the store reads SQLITE_CONSTRAINT_TRIGGER as a refused CHECK).
update app_user set parent_order_limit_multiplier = 1000000000 where parent_order_limit_multiplier > 1000000000;

create trigger app_user_multiplier_bounded_insert before insert on app_user
when new.parent_order_limit_multiplier > 1000000000
begin select raise(abort, 'app_user_multiplier_bounded'); end;
create trigger app_user_multiplier_bounded_update before update of parent_order_limit_multiplier on app_user
when new.parent_order_limit_multiplier > 1000000000
begin select raise(abort, 'app_user_multiplier_bounded'); end;

create trigger instrument_min_quantity_bounded_insert before insert on instrument
when typeof(new.min_quantity) <> 'integer' or new.min_quantity > 1000000000000
begin select raise(abort, 'instrument_min_quantity_bounded'); end;
create trigger instrument_min_quantity_bounded_update before update of min_quantity on instrument
when typeof(new.min_quantity) <> 'integer' or new.min_quantity > 1000000000000
begin select raise(abort, 'instrument_min_quantity_bounded'); end;

create trigger parent_order_quantity_bounded_insert before insert on parent_order
when typeof(new.quantity) <> 'integer' or typeof(new.working_quantity) <> 'integer'
  or typeof(new.matched_quantity) <> 'integer' or new.quantity > 1000000000000
  or new.working_quantity > new.quantity or new.matched_quantity > new.quantity
begin select raise(abort, 'parent_order_quantity_bounded'); end;
create trigger parent_order_quantity_bounded_update before update on parent_order
when typeof(new.quantity) <> 'integer' or typeof(new.working_quantity) <> 'integer'
  or typeof(new.matched_quantity) <> 'integer' or new.quantity > 1000000000000
  or new.working_quantity > new.quantity or new.matched_quantity > new.quantity
begin select raise(abort, 'parent_order_quantity_bounded'); end;

create trigger child_order_quantity_bounded_insert before insert on child_order
when typeof(new.quantity) <> 'integer' or new.quantity > 1000000000000
  or new.working_quantity > new.quantity or new.matched_quantity > new.quantity
begin select raise(abort, 'child_order_quantity_bounded'); end;
create trigger child_order_quantity_bounded_update before update on child_order
when typeof(new.quantity) <> 'integer' or new.quantity > 1000000000000
  or new.working_quantity > new.quantity or new.matched_quantity > new.quantity
begin select raise(abort, 'child_order_quantity_bounded'); end;

create trigger book_level_shown_bounded_insert before insert on book_level
when typeof(new.shown) <> 'integer'
begin select raise(abort, 'book_level_shown_bounded'); end;
create trigger book_level_shown_bounded_update before update on book_level
when typeof(new.shown) <> 'integer'
begin select raise(abort, 'book_level_shown_bounded'); end;

create trigger match_request_quantity_bounded before insert on match_request
when typeof(new.quantity) <> 'integer' or new.quantity > 1000000000000
begin select raise(abort, 'match_request_quantity_bounded'); end;

create trigger rfq_quantity_bounded before insert on rfq
when typeof(new.quantity) <> 'integer' or new.quantity > 1000000000000
begin select raise(abort, 'rfq_quantity_bounded'); end;

create trigger rfq_response_quantity_bounded_insert before insert on rfq_response
when new.buy_quantity > 1000000000000 or new.sell_quantity > 1000000000000
begin select raise(abort, 'rfq_response_quantity_bounded'); end;
create trigger rfq_response_quantity_bounded_update before update on rfq_response
when new.buy_quantity > 1000000000000 or new.sell_quantity > 1000000000000
begin select raise(abort, 'rfq_response_quantity_bounded'); end;
