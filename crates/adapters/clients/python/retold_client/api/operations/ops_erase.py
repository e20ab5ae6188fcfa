from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.erasure_body import ErasureBody
from ...models.erasure_dto import ErasureDto
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    *,
    body: ErasureBody,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/admin/ops/erase",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ErasureDto | Problem | None:
    if response.status_code == 200:
        response_200 = ErasureDto.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ErasureDto | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: ErasureBody,

) -> Response[ErasureDto | Problem]:
    """ Erase a record, a user or a scope for good: content, evidence, embeddings, FTS rows, the
    traces and audit details that quote it; then compact the store so the bytes are gone.

     Blocks writes while it compacts (searches go on): erasing 100 records (a scope) took
    0.4 s at 10k records and 1.5 s at 50k, writes waiting up to 0.4 s and 1.3 s
    (`docs/operations.md`).

    Args:
        body (ErasureBody): What to erase: exactly one of `record_id`, `user_id`, `scope`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErasureDto | Problem]
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
    body: ErasureBody,

) -> ErasureDto | Problem | None:
    """ Erase a record, a user or a scope for good: content, evidence, embeddings, FTS rows, the
    traces and audit details that quote it; then compact the store so the bytes are gone.

     Blocks writes while it compacts (searches go on): erasing 100 records (a scope) took
    0.4 s at 10k records and 1.5 s at 50k, writes waiting up to 0.4 s and 1.3 s
    (`docs/operations.md`).

    Args:
        body (ErasureBody): What to erase: exactly one of `record_id`, `user_id`, `scope`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErasureDto | Problem
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: ErasureBody,

) -> Response[ErasureDto | Problem]:
    """ Erase a record, a user or a scope for good: content, evidence, embeddings, FTS rows, the
    traces and audit details that quote it; then compact the store so the bytes are gone.

     Blocks writes while it compacts (searches go on): erasing 100 records (a scope) took
    0.4 s at 10k records and 1.5 s at 50k, writes waiting up to 0.4 s and 1.3 s
    (`docs/operations.md`).

    Args:
        body (ErasureBody): What to erase: exactly one of `record_id`, `user_id`, `scope`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ErasureDto | Problem]
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
    body: ErasureBody,

) -> ErasureDto | Problem | None:
    """ Erase a record, a user or a scope for good: content, evidence, embeddings, FTS rows, the
    traces and audit details that quote it; then compact the store so the bytes are gone.

     Blocks writes while it compacts (searches go on): erasing 100 records (a scope) took
    0.4 s at 10k records and 1.5 s at 50k, writes waiting up to 0.4 s and 1.3 s
    (`docs/operations.md`).

    Args:
        body (ErasureBody): What to erase: exactly one of `record_id`, `user_id`, `scope`.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ErasureDto | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
