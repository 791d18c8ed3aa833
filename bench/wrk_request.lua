-- wrk script used by bench.py.
-- Arguments (after --): METHOD PATH BODY_FILE|- KEYS_FILE|-
-- Each request carries the next bearer key of KEYS_FILE (one per line), so that the
-- per-key rate limits are spread over many keys. Responses are counted per status
-- and a one-line JSON summary prefixed with "WRKJSON " is printed at the end.

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("thread_id", counter)
  table.insert(threads, thread)
end

local function read_file(name)
  local f = assert(io.open(name, "r"))
  local data = f:read("*a")
  f:close()
  return data
end

local prepared = {}
local index = 1
statuses = {}

function init(args)
  local method, path, body_file, keys_file = args[1], args[2], args[3], args[4]
  local body = nil
  local headers = {}
  if body_file and body_file ~= "-" then
    body = read_file(body_file)
    headers["Content-Type"] = "application/json"
  end
  if keys_file and keys_file ~= "-" then
    for key in read_file(keys_file):gmatch("[^\r\n]+") do
      headers["Authorization"] = "Bearer " .. key
      table.insert(prepared, wrk.format(method, path, headers, body))
    end
  else
    table.insert(prepared, wrk.format(method, path, headers, body))
  end
  -- Threads start at different keys.
  index = ((thread_id or 1) * 7919) % #prepared + 1
end

function request()
  local req = prepared[index]
  index = index % #prepared + 1
  return req
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local merged = {}
  for _, thread in ipairs(threads) do
    local counts = thread:get("statuses")
    if counts then
      for status, n in pairs(counts) do
        merged[status] = (merged[status] or 0) + n
      end
    end
  end
  local parts = {}
  for status, n in pairs(merged) do
    table.insert(parts, string.format('"%d":%d', status, n))
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d},"statuses":{%s}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    table.concat(parts, ",")))
end
