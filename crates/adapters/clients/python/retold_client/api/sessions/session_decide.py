from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.decision_body import DecisionBody
from ...models.decision_outcome_dto import DecisionOutcomeDto
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    id: str,
    *,
    body: DecisionBody,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/sessions/{id}/decisions".format(id=quote(str(id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DecisionOutcomeDto | Problem | None:
    if response.status_code == 200:
        response_200 = DecisionOutcomeDto.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())



        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if response.status_code == 507:
        response_507 = Problem.from_dict(response.json())



        return response_507

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DecisionOutcomeDto | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: DecisionBody,

) -> Response[DecisionOutcomeDto | Problem]:
    """ Ask whether memory would change the draft answer of a turn: gaps are planned, searched
    and admitted against the draft and the session's profile; a bundle with a recorded
    fitness result regenerates the answer, and any failure keeps the draft with the reason.
    The decision is stored (`GET /v1/admin/decisions/{id}`).

    Args:
        id (str):
        body (DecisionBody): A turn and the host model's draft answer, for the orchestrator's
            decision.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DecisionOutcomeDto | Problem]
     """


    kwargs = _get_kwargs(
        id=id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    id: str,
    *,
    client: AuthenticatedClient,
    body: DecisionBody,

) -> DecisionOutcomeDto | Problem | None:
    """ Ask whether memory would change the draft answer of a turn: gaps are planned, searched
    and admitted against the draft and the session's profile; a bundle with a recorded
    fitness result regenerates the answer, and any failure keeps the draft with the reason.
    The decision is stored (`GET /v1/admin/decisions/{id}`).

    Args:
        id (str):
        body (DecisionBody): A turn and the host model's draft answer, for the orchestrator's
            decision.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DecisionOutcomeDto | Problem
     """


    return sync_detailed(
        id=id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    id: str,
    *,
    client: AuthenticatedClient,
    body: DecisionBody,

) -> Response[DecisionOutcomeDto | Problem]:
    """ Ask whether memory would change the draft answer of a turn: gaps are planned, searched
    and admitted against the draft and the session's profile; a bundle with a recorded
    fitness result regenerates the answer, and any failure keeps the draft with the reason.
    The decision is stored (`GET /v1/admin/decisions/{id}`).

    Args:
        id (str):
        body (DecisionBody): A turn and the host model's draft answer, for the orchestrator's
            decision.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DecisionOutcomeDto | Problem]
     """


    kwargs = _get_kwargs(
        id=id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    id: str,
    *,
    client: AuthenticatedClient,
    body: DecisionBody,

) -> DecisionOutcomeDto | Problem | None:
    """ Ask whether memory would change the draft answer of a turn: gaps are planned, searched
    and admitted against the draft and the session's profile; a bundle with a recorded
    fitness result regenerates the answer, and any failure keeps the draft with the reason.
    The decision is stored (`GET /v1/admin/decisions/{id}`).

    Args:
        id (str):
        body (DecisionBody): A turn and the host model's draft answer, for the orchestrator's
            decision.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DecisionOutcomeDto | Problem
     """


    return (await asyncio_detailed(
        id=id,
client=client,
body=body,

    )).parsed
