#!/bin/sh
# Configures Debian's Postfix for Trawl's after-queue content filter and runs it in the foreground.
# Every setting is written with postconf from the environment (docker-compose.yml, postfix service):
#   TRAWL_FILTER_HOST / TRAWL_FILTER_PORT  the filter, by its Compose service name (not 127.0.0.1:
#                                          inside this container that is Postfix itself)
#   POSTFIX_MYHOSTNAME, POSTFIX_RELAY_DOMAINS, POSTFIX_RELAYHOST
set -eu
postconf -e \
  "myhostname=${POSTFIX_MYHOSTNAME:-mx.trawl.local}" \
  "inet_interfaces=all" \
  "inet_protocols=ipv4" \
  "mydestination=" \
  "mynetworks_style=subnet" \
  "maillog_file=/dev/stdout" \
  "smtpd_relay_restrictions=permit_mynetworks,reject_unauth_destination" \
  "content_filter=trawl-filter:[${TRAWL_FILTER_HOST:-retriever-smtp}]:${TRAWL_FILTER_PORT:-10025}"
if [ -n "${POSTFIX_RELAY_DOMAINS:-}" ]; then postconf -e "relay_domains=${POSTFIX_RELAY_DOMAINS}"; fi
if [ -n "${POSTFIX_RELAYHOST:-}" ]; then postconf -e "relayhost=${POSTFIX_RELAYHOST}"; fi
# to the filter: the client's address and HELO go with each message (XFORWARD)
postconf -M "trawl-filter/unix=trawl-filter unix - - n - 20 smtp"
postconf -P \
  "trawl-filter/unix/smtp_send_xforward_command=yes" \
  "trawl-filter/unix/disable_mime_output_conversion=yes" \
  "trawl-filter/unix/smtp_generic_maps="
# back from the filter on 10026: from the Compose network only (mynetworks_style=subnet), no
# second content_filter, no checks done twice
postconf -M "10026/inet=10026 inet n - n - - smtpd"
postconf -P \
  "10026/inet/content_filter=" \
  "10026/inet/receive_override_options=no_unknown_recipient_checks,no_header_body_checks,no_milters" \
  "10026/inet/smtpd_helo_restrictions=" \
  "10026/inet/smtpd_client_restrictions=" \
  "10026/inet/smtpd_sender_restrictions=" \
  "10026/inet/smtpd_relay_restrictions=permit_mynetworks,reject" \
  "10026/inet/smtpd_recipient_restrictions=permit_mynetworks,reject" \
  "10026/inet/smtpd_authorized_xforward_hosts=\$mynetworks"
postfix check
exec postfix start-fg
