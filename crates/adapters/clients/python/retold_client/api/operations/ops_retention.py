from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.retention_body import RetentionBody
from ...models.retention_dto import RetentionDto
from typing import cast



def _get_kwargs(
    *,
    body: RetentionBody,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/admin/ops/retention",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RetentionDto | None:
    if response.status_code == 200:
        response_200 = RetentionDto.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RetentionDto]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: RetentionBody,

) -> Response[Problem | RetentionDto]:
    """ Delete session turns older than `operations.transcript_retention_days`, in sessions whose
    extraction has run (all with `force`), and search traces older than
    `operations.search_trace_retention_days` (a search's `search_id` then no longer explains it).
    Records keep their own evidence.

     Writes wait only for its deleting transactions (milliseconds when little is due).

    Args:
        body (RetentionBody): A retention run (session turns and search traces).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RetentionDto]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: RetentionBody,

) -> Problem | RetentionDto | None:
    """ Delete session turns older than `operations.transcript_retention_days`, in sessions whose
    extraction has run (all with `force`), and search traces older than
    `operations.search_trace_retention_days` (a search's `search_id` then no longer explains it).
    Records keep their own evidence.

     Writes wait only for its deleting transactions (milliseconds when little is due).

    Args:
        body (RetentionBody): A retention run (session turns and search traces).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RetentionDto
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: RetentionBody,

) -> Response[Problem | RetentionDto]:
    """ Delete session turns older than `operations.transcript_retention_days`, in sessions whose
    extraction has run (all with `force`), and search traces older than
    `operations.search_trace_retention_days` (a search's `search_id` then no longer explains it).
    Records keep their own evidence.

     Writes wait only for its deleting transactions (milliseconds when little is due).

    Args:
        body (RetentionBody): A retention run (session turns and search traces).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RetentionDto]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: RetentionBody,

) -> Problem | RetentionDto | None:
    """ Delete session turns older than `operations.transcript_retention_days`, in sessions whose
    extraction has run (all with `force`), and search traces older than
    `operations.search_trace_retention_days` (a search's `search_id` then no longer explains it).
    Records keep their own evidence.

     Writes wait only for its deleting transactions (milliseconds when little is due).

    Args:
        body (RetentionBody): A retention run (session turns and search traces).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RetentionDto
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
