-- wrk script for the Upstairs API: one request shape per run, a JSON summary at the end.
--
--   wrk -s bench/wrk/api.lua URL -- [token=T] [post=PARENT_ID[,PARENT_ID…] broker=BROKER_ID
--        ticks=LO:HI:DECIMALS] [limit=N]
--
-- Without `post`, every request is a GET of URL's path (with `Authorization: Bearer T`
-- when a token is given). With `post`, every request is `POST /api/orders` of one lot
-- on one of the parent orders (each parent equally often, shuffled) at a random valid
-- tick: LO..HI are the band in ticks and DECIMALS
-- places the decimal point (9400:9600:2 is 94.00 to 96.00 by 0.01). With `limit`, each
-- wrk thread stops after N answers of 201 (the fill of the book; bounded by -d too).
-- done() prints one line `WRK_JSON {...}` (latencies in microseconds) for bench/ratios.py.

local requests = {}
local next_request = 1
local limit = 0
local created = 0

local function price_text(t, decimals)
  if decimals == 0 then return tostring(t) end
  local s = string.format("%0" .. (decimals + 1) .. "d", t)
  return s:sub(1, #s - decimals) .. "." .. s:sub(#s - decimals + 1)
end

function init(args)
  local opt = {}
  for _, a in ipairs(args) do
    local k, v = a:match("^([%w_]+)=(.*)$")
    if k then opt[k] = v end
  end
  local headers = {}
  if opt.token and opt.token ~= "" then headers["Authorization"] = "Bearer " .. opt.token end
  if opt.post then
    local lo, hi, decimals = opt.ticks:match("^(%d+):(%d+):(%d+)$")
    lo, hi, decimals = tonumber(lo), tonumber(hi), tonumber(decimals)
    headers["Content-Type"] = "application/json"
    -- One prepared request per parent and price, used in a shuffled order: no JSON work per request.
    for parent in opt.post:gmatch("[^,]+") do
      for t = lo, hi do
        local body = string.format(
          '{"parent_order_id":"%s","quantity":1,"limit_price":%s,"broker_id":"%s","residual":true,"iceberg":false}',
          parent, price_text(t, decimals), opt.broker)
        requests[#requests + 1] = wrk.format("POST", "/api/orders", headers, body)
      end
    end
    math.randomseed(os.time() + tonumber(tostring(wrk.thread):match("0x(%x+)") or "0", 16) % 100000)
    for i = #requests, 2, -1 do
      local j = math.random(i)
      requests[i], requests[j] = requests[j], requests[i]
    end
  else
    requests[1] = wrk.format("GET", nil, headers)
  end
  limit = tonumber(opt.limit or "0")
  if limit <= 0 then
    response = nil -- wrk then skips parsing answers
  end
end

function request()
  local r = requests[next_request]
  next_request = next_request % #requests + 1
  return r
end

function response(status, headers, body)
  if status == 201 then
    created = created + 1
    if created >= limit then wrk.thread:stop() end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"mean_us":%.1f,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
