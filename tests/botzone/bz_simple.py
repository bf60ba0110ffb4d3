"""A Botzone bot that asked for the simplified interaction, in keep-running mode: its
first input is the turn count n, then 2n - 1 lines of requests and responses, then the
data and globaldata lines; later inputs are one request line each. It answers with the
response on one line, then a debug line, and says it keeps running."""

import json

from bzkit import replay

n = int(input())
lines = [json.loads(input()) for _ in range(2 * n - 1)]
input(), input()  # data, globaldata: unused
requests, responses = lines[0::2], lines[1::2]
player = replay(requests, responses)
request = requests[-1]
while True:
    response = player.decide(request)
    print(json.dumps(response))
    print(f"simple turn {n}")
    print(">>>BOTZONE_REQUEST_KEEP_RUNNING<<<", flush=True)
    if request["stage"] == "cover":
        player.hand.difference_update(response)
    request, n = json.loads(input()), n + 1
    player.feed(request, None)
