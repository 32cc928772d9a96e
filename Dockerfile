# Trawler worker and CLI. Build: docker build -t trawler .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/trawler-worker ./workers \
 && CGO_ENABLED=0 go build -trimpath -o /out/trawler ./starter

# Debian slim, not distroless: the process role runs poppler's pdftotext and pdfinfo to read PDFs.
FROM debian:bookworm-slim AS worker
RUN apt-get update \
 && apt-get install -y --no-install-recommends poppler-utils ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 65532 --no-create-home nonroot
USER nonroot
COPY --from=build /out/ /usr/local/bin/
# A container's loopback is its own: metrics listen on every interface for Prometheus to reach.
ENV TRAWLER_METRICS_ADDR=0.0.0.0:9464
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/trawler-worker"]

# The render role adds headless Chromium (docker build --target render): a separate image, so
# the other roles do not carry a browser.
FROM worker AS render
USER root
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-liberation \
 && rm -rf /var/lib/apt/lists/*
USER nonroot
ENV TRAWLER_ROLES=render

# The default image (docker build .): every role but render.
FROM worker
