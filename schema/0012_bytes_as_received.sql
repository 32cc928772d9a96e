-- robots.txt bodies and HTTP heads are kept byte for byte: a Latin-1 comment in a robots.txt
-- or a header value with bytes >= 0x80 is ordinary on the web, and a text column refuses
-- them (and a WARC record must hold the head as received).
ALTER TABLE hosts ALTER COLUMN robots_body TYPE bytea USING convert_to(robots_body, 'UTF8');
ALTER TABLE fetches ALTER COLUMN request_head TYPE bytea USING convert_to(request_head, 'UTF8'),
    ALTER COLUMN response_head TYPE bytea USING convert_to(response_head, 'UTF8');
