-- Bounded quantities (ADR 0027): no quantity above 10^12 lots (the domain's
-- QUANTITY_CEILING), no counter above its order's quantity, no multiplier above 10^9, so
-- that no sum the triggers keep can leave 64 bits. A multiplier stored before the bound
-- becomes the largest one; the quantity constraints are NOT VALID so that an upgrade never
-- fails on a row written before them, and hold for every row written from now on.
update app_user set parent_order_limit_multiplier = 1000000000 where parent_order_limit_multiplier > 1000000000;
alter table app_user add constraint app_user_multiplier_bounded
    check (parent_order_limit_multiplier <= 1000000000);
alter table instrument add constraint instrument_min_quantity_bounded
    check (min_quantity <= 1000000000000) not valid;
alter table parent_order add constraint parent_order_quantity_bounded
    check (quantity <= 1000000000000 and working_quantity <= quantity and matched_quantity <= quantity) not valid;
alter table child_order add constraint child_order_quantity_bounded
    check (quantity <= 1000000000000 and working_quantity <= quantity and matched_quantity <= quantity) not valid;
alter table match_request add constraint match_request_quantity_bounded
    check (quantity <= 1000000000000) not valid;
alter table rfq add constraint rfq_quantity_bounded
    check (quantity <= 1000000000000) not valid;
alter table rfq_response add constraint rfq_response_quantity_bounded
    check (buy_quantity <= 1000000000000 and sell_quantity <= 1000000000000) not valid;
