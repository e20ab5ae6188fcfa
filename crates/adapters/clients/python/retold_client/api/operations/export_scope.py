from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    *,
    scope: str,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["scope"] = scope


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/admin/export",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | None:
    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    scope: str,

) -> Response[Problem]:
    """ Export a scope's memories as JSON lines.

     The first line describes the export; then the entities the records link to (with their
    aliases), the records oldest first (every status but deleted: history included), each
    with its entity links, and the conflict links between them. No embeddings: the store that
    imports them embeds them with its own model. `retold import` (or `POST /v1/admin/import`)
    restores them as they were.

    Args:
        scope (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem]
     """


    kwargs = _get_kwargs(
        scope=scope,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    scope: str,

) -> Problem | None:
    """ Export a scope's memories as JSON lines.

     The first line describes the export; then the entities the records link to (with their
    aliases), the records oldest first (every status but deleted: history included), each
    with its entity links, and the conflict links between them. No embeddings: the store that
    imports them embeds them with its own model. `retold import` (or `POST /v1/admin/import`)
    restores them as they were.

    Args:
        scope (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem
     """


    return sync_detailed(
        client=client,
scope=scope,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    scope: str,

) -> Response[Problem]:
    """ Export a scope's memories as JSON lines.

     The first line describes the export; then the entities the records link to (with their
    aliases), the records oldest first (every status but deleted: history included), each
    with its entity links, and the conflict links between them. No embeddings: the store that
    imports them embeds them with its own model. `retold import` (or `POST /v1/admin/import`)
    restores them as they were.

    Args:
        scope (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem]
     """


    kwargs = _get_kwargs(
        scope=scope,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    scope: str,

) -> Problem | None:
    """ Export a scope's memories as JSON lines.

     The first line describes the export; then the entities the records link to (with their
    aliases), the records oldest first (every status but deleted: history included), each
    with its entity links, and the conflict links between them. No embeddings: the store that
    imports them embeds them with its own model. `retold import` (or `POST /v1/admin/import`)
    restores them as they were.

    Args:
        scope (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem
     """


    return (await asyncio_detailed(
        client=client,
scope=scope,

    )).parsed
