# Trawler worker and CLI. Build: docker build -t trawler .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/trawler-worker ./workers \
 && CGO_ENABLED=0 go build -trimpath -o /out/trawler ./starter

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
# A container's loopback is its own: metrics listen on every interface for Prometheus to reach.
ENV TRAWLER_METRICS_ADDR=0.0.0.0:9464
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/trawler-worker"]
