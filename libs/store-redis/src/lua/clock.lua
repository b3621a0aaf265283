-- now(): the server clock in ms. Also the round trip connect() uses to prove scripting works.
return now_ms()
