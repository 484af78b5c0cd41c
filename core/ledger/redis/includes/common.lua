--[[
  Every shared helper, for the scripts off the hot path. Includes are expanded recursively and each
  file once per script (redis-scripts.ts); hot scripts include only the parts they use.
]]
--- @include "num"
--- @include "acct"
--- @include "key"
--- @include "history"
--- @include "finish"
